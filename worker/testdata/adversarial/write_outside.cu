// Attack: leave files behind outside its own directory (the node's /tmp,
// the build cache, the harness's directory, /dev/shm of the node).
// Expected: PASSED or not, but none of the files exists on the node.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <fcntl.h>
#include <unistd.h>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  for (const char* p : {"/tmp/ptxb-adversarial-escape", "/root/.cache/ptxb-adversarial-escape",
                        "../ptxb-adversarial-escape", "/usr/lib/ptxb-adversarial-escape",
                        "/ptxb-adversarial-escape"}) {
    int fd = open(p, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) close(fd);
  }
  Gemm(A, B, C, stream);
}
