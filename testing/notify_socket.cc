#include "testing/notify_socket.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>

namespace ptxbench::testing {

int BindNotifySocket(const std::string& path, int timeout_s) {
  unlink(path.c_str());
  const int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  if (fd < 0) return -1;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", path.c_str());
  const timeval wait{timeout_s, 0};
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace ptxbench::testing
