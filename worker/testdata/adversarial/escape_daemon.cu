// Attack: leave a process behind (fork, setsid, fork), then do the work.
// Expected: PASSED or not, but no process of it survives the evaluation.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <unistd.h>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  static bool forked = false;
  if (!forked) {
    forked = true;
    if (fork() == 0) {
      setsid();
      if (fork() == 0) {
        for (;;) sleep(1);
      }
      _exit(0);
    }
  }
  Gemm(A, B, C, stream);
}
