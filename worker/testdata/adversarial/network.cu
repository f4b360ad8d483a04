// Attack: reach the network (loopback port 50555, where the test listens).
// Expected: RUNTIME_ERROR saying the socket was refused; no connection.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include <stdexcept>
#include <string>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(50555);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (sockaddr*)&addr, sizeof(addr)) != 0) {
    throw std::runtime_error(std::string("connect: ") + strerror(errno));
  }
  throw std::runtime_error("connected");
}
