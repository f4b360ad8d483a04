#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "workloads/reference/gemm_reference.h"

namespace ptxbench::reference {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // cuBLAS's advice for Hopper

absl::Status CublasStatus(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", cublasGetStatusName(s), ": ", cublasGetStatusString(s)));
}

constexpr int kTile = 16;

__global__ void GemmFp32Kernel(const __nv_bfloat16* __restrict__ a,
                               const __nv_bfloat16* __restrict__ b, float* __restrict__ c, int m,
                               int n, int k) {
  __shared__ float as[kTile][kTile + 1];
  __shared__ float bs[kTile][kTile + 1];
  const int row = blockIdx.y * kTile + threadIdx.y;  // of C and A
  const int col = blockIdx.x * kTile + threadIdx.x;  // of C; row of B
  const int brow = blockIdx.x * kTile + threadIdx.y;
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    const int kk = k0 + threadIdx.x;
    as[threadIdx.y][threadIdx.x] =
        (row < m && kk < k) ? __bfloat162float(a[static_cast<int64_t>(row) * k + kk]) : 0.0f;
    bs[threadIdx.y][threadIdx.x] =
        (brow < n && kk < k) ? __bfloat162float(b[static_cast<int64_t>(brow) * k + kk]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kTile; ++j) acc = fmaf(as[threadIdx.y][j], bs[threadIdx.x][j], acc);
    __syncthreads();
  }
  if (row < m && col < n) c[static_cast<int64_t>(row) * n + col] = acc;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CublasGemm>> CublasGemm::Create() {
  cublasHandle_t handle = nullptr;
  absl::Status s = CublasStatus(cublasCreate(&handle), "cublasCreate");
  if (!s.ok()) return s;
  // A workspace of ours, private to this process (device_memory.h): what
  // cuBLAS keeps there (split-K partial sums of an expected output) is no
  // other process's to read.
  absl::StatusOr<DeviceMemory> workspace = DeviceMemory::Allocate(kWorkspaceBytes);
  if (!workspace.ok()) {
    cublasDestroy(handle);
    return absl::ResourceExhaustedError(
        absl::StrCat("the cuBLAS workspace: ", workspace.status().message()));
  }
  auto gemm = std::unique_ptr<CublasGemm>(new CublasGemm(handle, *std::move(workspace)));
  absl::Status ws = CublasStatus(
      cublasSetWorkspace(handle, gemm->workspace_.data(), kWorkspaceBytes), "cublasSetWorkspace");
  if (!ws.ok()) return ws;
  return gemm;
}

CublasGemm::~CublasGemm() { cublasDestroy(handle_); }

absl::Status CublasGemm::Run(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                             int m, int n, int k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM sizes must be positive, got M=", m, " N=", n, " K=", k));
  }
  absl::Status s = CublasStatus(cublasSetStream(handle_, stream), "cublasSetStream");
  if (!s.ok()) return s;
  // cuBLAS is column-major. Row-major C[M,N] is column-major C^T[N,M] with
  // ld N, and C^T = B·A^T: row-major B[N,K] read column-major is B^T (K x N,
  // ld K), so op T; row-major A[M,K] read column-major is A^T (K x M, ld K),
  // so op N. This is the "TN" GEMM.
  const float alpha = 1.0f, beta = 0.0f;
  return CublasStatus(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, b,
                                   CUDA_R_16BF, k, a, CUDA_R_16BF, k, &beta, c, CUDA_R_16BF, n,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                      "cublasGemmEx(bf16 TN)");
}

absl::Status GemmFp32Reference(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, int m,
                               int n, int k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM sizes must be positive, got M=", m, " N=", n, " K=", k));
  }
  dim3 block(kTile, kTile);
  dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  GemmFp32Kernel<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    return absl::InternalError(absl::StrCat("GemmFp32Kernel launch: ", cudaGetErrorString(err)));
  }
  return absl::OkStatus();
}

}  // namespace ptxbench::reference
