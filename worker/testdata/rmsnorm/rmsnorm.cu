// A correct, simple RMSNorm for the test dataset's rmsnorm_h4096 (tests):
// y = x / sqrt(mean(x^2) + eps) * weight over rows of 4096, in float32,
// bfloat16 in and out. One block of 256 threads per row; eps is a scalar
// input, a 0-dimensional tensor in device memory.
#include <cuda_bf16.h>

#include "ptxbench/kernel_abi.h"

constexpr bool kUseWeight = true;  // tests turn it off: a kernel that forgets the weight
constexpr int kThreads = 256;

__global__ void RmsNorm(const __nv_bfloat16* x, const __nv_bfloat16* w, const float* eps,
                        __nv_bfloat16* y, int hidden) {
  const __nv_bfloat16* row = x + (size_t)blockIdx.x * hidden;
  float sum = 0;
  for (int i = threadIdx.x; i < hidden; i += kThreads) {
    const float v = __bfloat162float(row[i]);
    sum += v * v;
  }
  __shared__ float partial[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0;
    for (int i = 0; i < kThreads / 32; ++i) total += partial[i];
    partial[0] = rsqrtf(total / hidden + *eps);
  }
  __syncthreads();
  const float inv_rms = partial[0];
  for (int i = threadIdx.x; i < hidden; i += kThreads) {
    const float scale = kUseWeight ? __bfloat162float(w[i]) : 1.0f;
    y[(size_t)blockIdx.x * hidden + i] = __float2bfloat16(__bfloat162float(row[i]) * inv_rms * scale);
  }
}

PTXB_EXPORT void run(const ptxb::Tensor& hidden_states, const ptxb::Tensor& weight,
                     const ptxb::Tensor& eps, ptxb::Tensor& output, cudaStream_t stream) {
  const int rows = static_cast<int>(hidden_states.sizes[0]);
  const int hidden = static_cast<int>(hidden_states.sizes[1]);
  RmsNorm<<<rows, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(hidden_states.data),
                                         static_cast<const __nv_bfloat16*>(weight.data),
                                         static_cast<const float*>(eps.data),
                                         static_cast<__nv_bfloat16*>(output.data), hidden);
}
