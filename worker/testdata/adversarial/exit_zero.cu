// Attack: exit(0) in the middle of the evaluation (a clean end, no
// results). Expected: RUNTIME_ERROR ("exited with code 0"), fed back.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <stdlib.h>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  exit(0);
}
