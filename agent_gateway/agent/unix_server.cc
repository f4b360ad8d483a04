#include "agent_gateway/agent/unix_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ptxbench::agent_gateway {

UnixSocketServer::UnixSocketServer(int max_connections, Handler handler)
    : max_connections_(max_connections), handler_(std::move(handler)) {}

UnixSocketServer::~UnixSocketServer() { Stop(); }

bool UnixSocketServer::Listen(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path) || listener_ >= 0) return false;
  std::memcpy(addr.sun_path, path.data(), path.size());
  unlink(path.c_str());
  listener_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) return false;
  // The socket is made 0600 by chmod after bind, not by a umask around it:
  // the umask is the whole process's, and the gateway sets up other
  // sessions' directories and files on other threads meanwhile (a directory
  // made in that window came out 0600, and its session's CLI could not
  // reach its own HOME). Until the chmod the file has the process's usual
  // mode (0755 under umask 022): connecting needs write permission, which
  // only its owner has.
  const bool bound = bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  if (!bound || chmod(path.c_str(), 0600) != 0 || listen(listener_, max_connections_) != 0) {
    return false;
  }
  path_ = path;
  server_ = std::thread([this] { Serve(); });
  return true;
}

void UnixSocketServer::Serve() {
  for (;;) {
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || connections_ >= max_connections_) {
      close(fd);
      continue;
    }
    ++connections_;
    std::thread([this, fd] {
      handler_(fd);
      close(fd);
      std::lock_guard<std::mutex> lock(mu_);
      --connections_;
      done_.notify_all();
    }).detach();
  }
}

void UnixSocketServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (listener_ >= 0) shutdown(listener_, SHUT_RDWR);
  if (server_.joinable()) server_.join();
  // A connection's thread holds no reference once counted out.
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [this] { return connections_ == 0; });
  if (listener_ >= 0) close(listener_);
  listener_ = -1;
  if (!path_.empty()) unlink(path_.c_str());
}

}  // namespace ptxbench::agent_gateway
