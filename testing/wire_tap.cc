#include "testing/wire_tap.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ptxbench::testing {
namespace {

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

WireTap::WireTap(int upstream_port) : upstream_port_(upstream_port) {
  listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener_, 128) != 0 ||
      getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return;
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { Accept(); });
}

WireTap::~WireTap() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> relays;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_) shutdown(fd, SHUT_RDWR);
    relays.swap(relays_);
  }
  for (std::thread& t : relays) t.join();
  if (listener_ >= 0) close(listener_);
}

std::vector<std::string> WireTap::sent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sent_;
}

std::string WireTap::all_sent() const {
  std::string all;
  for (const std::string& s : sent()) all += s;
  return all;
}

void WireTap::Accept() {
  while (!stopping_) {
    pollfd p{listener_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    sent_.emplace_back();
    open_.push_back(client);
    relays_.emplace_back([this, client, index = sent_.size() - 1] { Relay(client, index); });
  }
}

void WireTap::Relay(int client, size_t index) {
  const int upstream = Connect(upstream_port_);
  if (upstream >= 0) {
    std::lock_guard<std::mutex> lock(mu_);
    open_.push_back(upstream);
  }
  const int ends[2] = {client, upstream};
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  bool open[2] = {upstream >= 0, upstream >= 0};
  while ((open[0] || open[1]) && !stopping_) {
    if (poll(fds, 2, 100) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[64 << 10];
      const ssize_t n = recv(ends[i], buffer, sizeof(buffer), 0);
      if (n > 0 && i == 0) {
        std::lock_guard<std::mutex> lock(mu_);
        std::string& kept = sent_[index];
        const size_t room = kKeptPerConnection - std::min(kept.size(), kKeptPerConnection);
        kept.append(buffer, std::min(static_cast<size_t>(n), room));
      }
      if (n <= 0 || !SendAll(ends[1 - i], buffer, static_cast<size_t>(n))) {
        // This side ended: the other end gets what is in flight, then the end.
        open[i] = false;
        fds[i].fd = -1;
        shutdown(ends[1 - i], SHUT_WR);
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : {client, upstream}) {
    if (fd < 0) continue;
    open_.erase(std::remove(open_.begin(), open_.end(), fd), open_.end());
    close(fd);
  }
}

}  // namespace ptxbench::testing
