#include "agent_tool/relay.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::agent_tool {
namespace {

int ConnectUnix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return -1;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Copies what is readable on `from` to `to`; false once `from` ended.
bool Pump(int from, int to) {
  char buffer[1 << 16];
  const ssize_t n = read(from, buffer, sizeof(buffer));
  if (n <= 0) return n < 0 && (errno == EINTR || errno == EAGAIN);
  for (ssize_t done = 0; done < n;) {
    const ssize_t w = send(to, buffer + done, static_cast<size_t>(n - done), MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += w;
  }
  return true;
}

void Join(int client, const std::string& socket_path) {
  const int upstream = ConnectUnix(socket_path);
  if (upstream < 0) {
    close(client);
    return;
  }
  Splice(client, upstream);
}

}  // namespace

void Splice(int client, int upstream) {
  const int ends[2] = {client, upstream};
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  bool open[2] = {true, true};
  while (open[0] || open[1]) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (!Pump(ends[i], ends[1 - i])) {
        open[i] = false;
        fds[i].fd = -1;  // poll ignores it from now on
        shutdown(ends[1 - i], SHUT_WR);
      }
    }
  }
  close(client);
  close(upstream);
}

absl::StatusOr<int> ListenLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", strerror(errno)));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 64) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("listening on 127.0.0.1:", port, ": ",
                                               strerror(err)));
  }
  return fd;
}

void RunRelay(int listener, const std::string& socket_path) {
  for (;;) {
    const int client = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE) continue;
      _exit(1);
    }
    std::thread(Join, client, socket_path).detach();
  }
}

}  // namespace ptxbench::agent_tool
