#ifndef PTXBENCH_TESTING_LOOPBACK_CANARY_H_
#define PTXBENCH_TESTING_LOOPBACK_CANARY_H_

// A listener on the host's 127.0.0.1 (a free port) that a sandboxed process
// must not reach: tests point the process at it, then ask whether anything
// connected.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ptxbench::testing {

class LoopbackCanary {
 public:
  LoopbackCanary() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && listen(fd_, 8) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port_ = ntohs(addr.sin_port);
    }
  }
  ~LoopbackCanary() { close(fd_); }
  LoopbackCanary(const LoopbackCanary&) = delete;
  LoopbackCanary& operator=(const LoopbackCanary&) = delete;

  int port() const { return port_; }  // 0 when it could not listen
  bool Contacted() const { return accept(fd_, nullptr, nullptr) >= 0; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_LOOPBACK_CANARY_H_
