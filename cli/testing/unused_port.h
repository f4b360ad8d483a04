#ifndef PTXBENCH_CLI_TESTING_UNUSED_PORT_H_
#define PTXBENCH_CLI_TESTING_UNUSED_PORT_H_

// A loopback TCP port nobody listens on (bound, then released), for tests.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ptxbench::cli::fakes {

inline int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  return ok ? ntohs(addr.sin_port) : 0;
}

}  // namespace ptxbench::cli::fakes

#endif  // PTXBENCH_CLI_TESTING_UNUSED_PORT_H_
