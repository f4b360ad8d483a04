// Attack: end the process while it is being loaded, before any call.
// Expected: RUNTIME_ERROR (the kernel did not load), never INFRA_ERROR.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <unistd.h>

__attribute__((constructor)) static void Leave() { _exit(3); }

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  Gemm(A, B, C, stream);
}
