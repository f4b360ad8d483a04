// Attack: fork until the kernel refuses. Expected: RUNTIME_ERROR (its
// process limit); nothing of it survives.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <unistd.h>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  for (int i = 0; i < 100000; ++i) {
    pid_t pid = fork();
    if (pid < 0) break;
    if (pid == 0) {
      for (;;) pause();
    }
  }
  for (;;) sleep(1);
}
