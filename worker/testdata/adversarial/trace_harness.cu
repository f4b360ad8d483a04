// Attack: read another process's memory (its parent, the sandbox init, and
// low pids where the harness might be). Expected: RUNTIME_ERROR saying each
// attempt was refused.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  std::string report;
  for (pid_t pid : {getppid(), (pid_t)1, (pid_t)2, (pid_t)100, (pid_t)1000}) {
    if (ptrace(PTRACE_ATTACH, pid, nullptr, nullptr) == 0) report += "attached ";
    else report += std::string("ptrace: ") + strerror(errno) + "; ";
    char buf[64];
    iovec local{buf, sizeof(buf)}, remote{(void*)0x400000, sizeof(buf)};
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) > 0) report += "read ";
    else report += std::string("process_vm_readv: ") + strerror(errno) + "; ";
  }
  throw std::runtime_error(report);
}
