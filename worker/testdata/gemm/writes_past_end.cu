// The simple correct GEMM (correct.cu) that also writes four zeros past the
// end of its output: inside the allocation's padding, which is zero anyway,
// so the checks pass it; only the memcheck gate sees the write (tests:
// worker/memcheck_gpu_test.cc).
#include <cuda_bf16.h>

#include "ptxbench/kernel_abi.h"

constexpr int kTile = 16;

__global__ void gemm_tiled(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                           int m, int n, int k) {
  __shared__ float as[kTile][kTile + 1];
  __shared__ float bs[kTile][kTile + 1];
  const int row = blockIdx.y * kTile + threadIdx.y;  // of C and A
  const int col = blockIdx.x * kTile + threadIdx.x;  // of C, row of B
  const int brow = blockIdx.x * kTile + threadIdx.y;
  float acc = 0.f;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    as[threadIdx.y][threadIdx.x] =
        row < m && k0 + threadIdx.x < k ? __bfloat162float(a[(size_t)row * k + k0 + threadIdx.x]) : 0.f;
    bs[threadIdx.y][threadIdx.x] =
        brow < n && k0 + threadIdx.x < k ? __bfloat162float(b[(size_t)brow * k + k0 + threadIdx.x]) : 0.f;
    __syncthreads();
    for (int i = 0; i < kTile; ++i) acc += as[threadIdx.y][i] * bs[threadIdx.x][i];
    __syncthreads();
  }
  if (row < m && col < n) c[(size_t)row * n + col] = __float2bfloat16(acc);
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.y == 0 && threadIdx.x < 4) {
    c[(size_t)m * n + threadIdx.x] = __float2bfloat16(0.f);  // past the end
  }
}

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  const int m = (int)A.sizes[0], k = (int)A.sizes[1], n = (int)B.sizes[0];
  dim3 block(kTile, kTile), grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  gemm_tiled<<<grid, block, 0, stream>>>((const __nv_bfloat16*)A.data, (const __nv_bfloat16*)B.data,
                                         (__nv_bfloat16*)C.data, m, n, k);
}
