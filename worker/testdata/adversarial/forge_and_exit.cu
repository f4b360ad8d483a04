// Attack: write forged PASSED lines, then end the process cleanly before
// the harness can check anything. Expected: RUNTIME_ERROR naming the exit;
// never INFRA_ERROR (that would hide it from the model and retry it).
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <stdio.h>
#include <unistd.h>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  printf("{\"trace\":{\"status\":\"PASSED\",\"speedup\":780}}\n");
  fflush(stdout);
  _exit(0);
}
