#ifndef PTXBENCH_WORKLOADS_REFERENCE_ATTENTION_REFERENCE_H_
#define PTXBENCH_WORKLOADS_REFERENCE_ATTENTION_REFERENCE_H_

// References for the attention definitions (mha_with_lse_d128[_causal],
// mha_bwd_d128[_causal]): Q, K, V, O, dO, dQ, dK, dV are [B,H,S,D] row-major,
// LSE is [B,H,S] fp32 = ln(sum_j exp(scale * q_i·k_j)) over the attended keys
// (max included), scale = 1/sqrt(D); causal: query i attends keys j <= i.
// CudnnAttention is the production baseline that candidates are timed
// against; the Fp32 functions are the simple kernels that validate it.

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <cudnn_graph.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "workloads/reference/device_memory.h"

namespace ptxbench::reference {

struct AttentionShape {
  int batch = 0;
  int heads = 0;
  int seq = 0;
  int head_dim = 0;
  bool causal = false;
};

// cuDNN's fused flash attention (SDPA), built through the cuDNN v9 backend
// API: one operation graph each for forward and backward, finalized once in
// Create together with a workspace, so Forward/Backward only enqueue work.
// Not thread-safe: one user at a time. Pointers must be 16-byte aligned.
class CudnnAttention {
 public:
  // kInvalidArgument for a bad shape; kUnimplemented when cuDNN has no engine
  // for the graph (NOT_SUPPORTED family); kInternal for other cuDNN errors
  // (each names the cuDNN status and the descriptor/attribute that failed);
  // kResourceExhausted for the workspace.
  static absl::StatusOr<std::unique_ptr<CudnnAttention>> Create(const AttentionShape& shape);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  // Enqueues O (bf16) and LSE (fp32) on `stream`.
  absl::Status Forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                       __nv_bfloat16* o, float* lse, cudaStream_t stream);
  // Enqueues dQ, dK, dV (bf16) from the forward's O and LSE and the
  // incoming gradient dO, on `stream`.
  absl::Status Backward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                        const __nv_bfloat16* o, const __nv_bfloat16* d_o, const float* lse,
                        __nv_bfloat16* dq, __nv_bfloat16* dk, __nv_bfloat16* dv,
                        cudaStream_t stream);

  // The cuDNN version and the engines chosen, e.g. "cuDNN 91400; cuDNN SDPA
  // forward graph: engine 2 (config 1 of 2), workspace 256 B; ...". For logs.
  const std::string& plan_summary() const { return plan_summary_; }

 private:
  CudnnAttention() = default;

  AttentionShape shape_;
  cudnnHandle_t handle_ = nullptr;
  // Every backend descriptor created (tensors, ops, graphs, configs, plans):
  // plans refer to the rest, so all live as long as this object.
  std::vector<cudnnBackendDescriptor_t> descriptors_;
  cudnnBackendDescriptor_t forward_plan_ = nullptr;
  cudnnBackendDescriptor_t backward_plan_ = nullptr;
  DeviceMemory workspace_;  // plan workspace, then dQ accumulator and rowsum(dO*O)
  size_t plan_workspace_bytes_ = 0;
  float* dq_accum_ = nullptr;     // [B,H,S,D] fp32, inside workspace_
  float* softmax_sum_ = nullptr;  // [B,H,S] fp32, inside workspace_
  bool zero_dq_accum_ = false;    // cuDNN < 9.6 expects it zeroed by the caller
  std::string plan_summary_;
};

// Simple fp32 kernels for validation: fp32 products and sums, one block per
// query row (forward, dQ) or key row (dK, dV). Slow; for small shapes or one
// head at a time. kInvalidArgument for a bad shape, kInternal on a launch or
// allocation error. Enqueued on `stream`.

// O [B,H,S,D] and LSE [B,H,S], both fp32.
absl::Status AttentionForwardFp32(const AttentionShape& shape, const __nv_bfloat16* q,
                                  const __nv_bfloat16* k, const __nv_bfloat16* v, float* o,
                                  float* lse, cudaStream_t stream);

// dQ, dK, dV fp32 from P = exp(scale * q_i·k_j - lse_i) and D_i = rowsum(dO*O),
// where O is recomputed in fp32 by AttentionForwardFp32 (temporary buffers
// come from cudaMallocAsync on `stream`). `lse` is normally the fp32 forward's.
absl::Status AttentionBackwardFp32(const AttentionShape& shape, const __nv_bfloat16* q,
                                   const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const __nv_bfloat16* d_o, const float* lse, float* dq, float* dk,
                                   float* dv, cudaStream_t stream);

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_ATTENTION_REFERENCE_H_
