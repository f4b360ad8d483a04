// Attack: SIGKILL its parent, PID 1 and every process it can (kill(-1)),
// computing nothing. Expected: judged on its outputs (INCORRECT_NUMERICAL),
// promptly; the harness, the worker and the node carry on.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <signal.h>
#include <unistd.h>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  kill(getppid(), SIGKILL);
  kill(1, SIGKILL);
  kill(-1, SIGKILL);
}
