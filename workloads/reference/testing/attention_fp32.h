#ifndef PTXBENCH_WORKLOADS_REFERENCE_TESTING_ATTENTION_FP32_H_
#define PTXBENCH_WORKLOADS_REFERENCE_TESTING_ATTENTION_FP32_H_

// The fp32 oracle of the attention references (attention_reference.h's
// layout and LSE): simple kernels, fp32 products and sums, one block per
// query row (forward, dQ) or key row (dK, dV), that validate cuDNN's fused
// attention in attention_gpu_test. Slow; for small shapes or one head at a
// time. Test code: only the GPU tests link it (ptxbench::reference_testing).
// kInvalidArgument for a bad shape (ValidateAttentionShape), kInternal on a
// launch or allocation error. Enqueued on `stream`.

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "workloads/reference/attention_reference.h"

namespace ptxbench::reference::testing {

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

}  // namespace ptxbench::reference::testing

#endif  // PTXBENCH_WORKLOADS_REFERENCE_TESTING_ATTENTION_FP32_H_
