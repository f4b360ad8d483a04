#include "common/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace ptxbench {

absl::Status SdNotify(absl::string_view state) {
  const char* socket_path = std::getenv("NOTIFY_SOCKET");
  if (socket_path == nullptr || *socket_path == '\0') return absl::OkStatus();
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const size_t length = std::strlen(socket_path);
  if (length >= sizeof(address.sun_path)) {
    return absl::UnavailableError("NOTIFY_SOCKET is too long");
  }
  std::memcpy(address.sun_path, socket_path, length);
  // "@name" is an abstract socket: its first byte is NUL.
  if (address.sun_path[0] == '@') address.sun_path[0] = '\0';
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  const ssize_t sent =
      sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&address),
             static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length));
  const int error = errno;
  close(fd);
  if (sent != static_cast<ssize_t>(state.size())) {
    return absl::UnavailableError(absl::StrCat("notify ", socket_path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace ptxbench
