#ifndef PTXBENCH_WORKLOADS_REFERENCE_GEMM_REFERENCE_H_
#define PTXBENCH_WORKLOADS_REFERENCE_GEMM_REFERENCE_H_

// References for gemm_n7168_k5120 (and any M, N, K of the same form):
// C[M,N] = A[M,K] · B[N,K]^T, all row-major, bf16 in and out, fp32
// accumulation. CublasGemm is the production baseline that candidates are
// timed against; GemmFp32Reference is the simple kernel that validates it.

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "workloads/reference/device_memory.h"

namespace ptxbench::reference {

// One cuBLAS handle with its own 32 MiB workspace (so no allocation happens
// inside a timed call). Not thread-safe: one user at a time.
class CublasGemm {
 public:
  // Errors: kInternal when cuBLAS cannot start, kResourceExhausted for the workspace.
  static absl::StatusOr<std::unique_ptr<CublasGemm>> Create();
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // Enqueues C = A·B^T on `stream`. kInvalidArgument for non-positive sizes,
  // kInternal with the cuBLAS status name on failure.
  absl::Status Run(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, int m, int n,
                   int k, cudaStream_t stream);

 private:
  CublasGemm(cublasHandle_t handle, DeviceMemory workspace)
      : handle_(handle), workspace_(std::move(workspace)) {}
  cublasHandle_t handle_;
  DeviceMemory workspace_;
};

// C (fp32) = A·B^T with fp32 products and sums, 16x16 shared-memory tiles.
// Slow; for validation only.
absl::Status GemmFp32Reference(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, int m,
                               int n, int k, cudaStream_t stream);

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_GEMM_REFERENCE_H_
