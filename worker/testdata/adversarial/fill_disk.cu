// Attack: fill every place it can write (its directory, /tmp, /dev/shm)
// until the disk is full, hoping to fail the evaluation as the node's fault
// (INFRA_ERROR, retried elsewhere at ptxbench's cost) and every neighbour
// that needs the disk (a compile beside it); then fail.
// Expected: RUNTIME_ERROR naming its disk quota; nothing outside its own
// filesystem fills (the test compiles a kernel meanwhile).
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  std::vector<char> chunk(1 << 20, 'x');
  std::string report = "FILLED";
  for (const char* dir : {".", "/tmp", "/dev/shm", "/ptxbench", "/"}) {
    long written = 0;
    int err = 0;
    for (int i = 0; i < 100000 && err == 0; ++i) {
      const std::string path = std::string(dir) + "/fill-" + std::to_string(i);
      const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0) {
        err = errno;
        break;
      }
      for (int j = 0; j < 64; ++j) {
        const ssize_t n = write(fd, chunk.data(), chunk.size());
        if (n < 0) {
          err = errno;
          break;
        }
        written += n;
      }
      close(fd);
    }
    report +=
        std::string(" ") + dir + "=" + std::to_string(written >> 20) + "MiB(" + strerror(err) + ")";
  }
  throw std::runtime_error(report);
}
