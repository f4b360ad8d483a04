// C[M,N] = A[M,K] · B[N,K]^T in bfloat16, written in the TVM-FFI style of
// FlashInfer-Bench and PTXBench kernels (TensorView parameters, the stream
// from TVMFFIEnvGetStream, exported with TVM_FFI_DLL_EXPORT_TYPED_FUNC inside
// its namespace), feeding shared memory with TMA: the tensor maps are built
// with the driver API (cuTensorMapEncodeTiled) and each 64x64 tile of A and B
// arrives by cp.async.bulk.tensor on an mbarrier. The arithmetic is plain
// FMA; the point is the ABI and the TMA path, not speed.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/tvm_ffi.h>

#include <cstdint>

namespace tma_gemm {

constexpr int kTile = 64;  // rows of A and B per tile, and K per step
constexpr int kThreads = 256;

__device__ inline uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ inline void LoadTile(const CUtensorMap* map, void* dst, uint64_t* bar, int k, int row) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(SharedAddress(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(k), "r"(row), "r"(SharedAddress(bar))
      : "memory");
}

__device__ inline void WaitPhase(uint64_t* bar, uint32_t phase) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(SharedAddress(bar)), "r"(phase)
        : "memory");
  }
}

__global__ void __launch_bounds__(kThreads)
    GemmKernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
               __nv_bfloat16* c, int m, int n, int k) {
  __shared__ alignas(128) __nv_bfloat16 tile_a[kTile * kTile];  // [row][k]
  __shared__ alignas(128) __nv_bfloat16 tile_b[kTile * kTile];
  __shared__ alignas(8) uint64_t bar;
  const int tid = threadIdx.x;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(SharedAddress(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  const int ty = tid / 16, tx = tid % 16;  // a 4x4 block of outputs per thread
  float acc[4][4] = {};
  uint32_t phase = 0;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    if (tid == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                       SharedAddress(&bar)),
                   "r"(static_cast<uint32_t>(2 * sizeof(tile_a)))
                   : "memory");
      LoadTile(&map_a, tile_a, &bar, k0, row0);  // rows past M arrive as zeros
      LoadTile(&map_b, tile_b, &bar, k0, col0);
    }
    WaitPhase(&bar, phase);
    phase ^= 1;
    for (int kk = 0; kk < kTile; ++kk) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = __bfloat162float(tile_a[(ty * 4 + i) * kTile + kk]);
      for (int j = 0; j < 4; ++j) b[j] = __bfloat162float(tile_b[(tx * 4 + j) * kTile + kk]);
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();  // every thread is done with the tiles before the next load
  }
  for (int i = 0; i < 4; ++i) {
    const int row = row0 + ty * 4 + i;
    if (row >= m) continue;
    for (int j = 0; j < 4; ++j) {
      const int col = col0 + tx * 4 + j;
      if (col < n) c[static_cast<int64_t>(row) * n + col] = __float2bfloat16(acc[i][j]);
    }
  }
}

// A row-major [rows, k] bf16 matrix, read in 64x64 tiles.
CUtensorMap TileMap(void* data, int64_t rows, int64_t k) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k) * sizeof(__nv_bfloat16)};
  const cuuint32_t box[2] = {kTile, kTile}, element_strides[2] = {1, 1};
  const CUresult r = cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, data, dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    cuGetErrorName(r, &name);
    TVM_FFI_THROW(RuntimeError) << "cuTensorMapEncodeTiled: " << (name ? name : "unknown error");
  }
  return map;
}

void run(tvm::ffi::TensorView A, tvm::ffi::TensorView B, tvm::ffi::TensorView C) {
  TVM_FFI_ICHECK_EQ(A.dtype(), (DLDataType{kDLBfloat, 16, 1}));
  TVM_FFI_CHECK(A.size(1) % kTile == 0 && B.size(0) % kTile == 0, ValueError)
      << "K and N must be multiples of " << kTile;
  cudaSetDevice(A.device().device_id);
  auto stream = static_cast<cudaStream_t>(
      TVMFFIEnvGetStream(A.device().device_type, A.device().device_id));
  const int m = static_cast<int>(A.size(0)), k = static_cast<int>(A.size(1));
  const int n = static_cast<int>(B.size(0));
  const CUtensorMap map_a = TileMap(A.data_ptr(), m, k);
  const CUtensorMap map_b = TileMap(B.data_ptr(), n, k);
  const dim3 grid(n / kTile, (m + kTile - 1) / kTile);
  GemmKernel<<<grid, kThreads, 0, stream>>>(map_a, map_b,
                                             static_cast<__nv_bfloat16*>(C.data_ptr()), m, n, k);
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, tma_gemm::run);

}  // namespace tma_gemm
