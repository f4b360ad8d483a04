#ifndef PTXBENCH_WORKLOADS_REFERENCE_ATTENTION_REFERENCE_H_
#define PTXBENCH_WORKLOADS_REFERENCE_ATTENTION_REFERENCE_H_

// References for the attention definitions (mha_with_lse_d128[_causal],
// mha_bwd_d128[_causal]): Q, K, V, O, dO, dQ, dK, dV are [B,H,S,D] row-major,
// LSE is [B,H,S] fp32 = ln(sum_j exp(scale * q_i·k_j)) over the attended keys
// (max included), scale = 1/sqrt(D); causal: query i attends keys j <= i.
// CudnnAttention is the production baseline that candidates are timed
// against; its fp32 oracle is test code (testing/attention_fp32.h).

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

// kInvalidArgument unless every size is positive and B*H is at most 65535
// (a grid's y extent, which the fp32 oracle's kernels use).
absl::Status ValidateAttentionShape(const AttentionShape& shape);

// The softmax scale, 1/sqrt(D).
float AttentionScale(const AttentionShape& shape);

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_ATTENTION_REFERENCE_H_
