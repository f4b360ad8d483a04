#include "testing/eval_socket_stub.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace ptxbench::testing {

EvalSocketStub::EvalSocketStub(std::string path, agent_tool::EvalReply reply)
    : path_(std::move(path)), reply_(std::move(reply)) {
  unlink(path_.c_str());
  listener_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (listener_ < 0 || path_.size() >= sizeof(addr.sun_path)) return;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  if (bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener_, 8) != 0) {
    close(listener_);
    listener_ = -1;
    return;
  }
  server_ = std::thread([this] { Serve(); });
}

EvalSocketStub::~EvalSocketStub() {
  stop_ = true;
  if (listener_ >= 0) shutdown(listener_, SHUT_RDWR);
  if (server_.joinable()) server_.join();
  if (listener_ >= 0) close(listener_);
  unlink(path_.c_str());
}

std::vector<agent_tool::EvalRequest> EvalSocketStub::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void EvalSocketStub::Serve() {
  while (!stop_) {
    const int fd = accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    absl::StatusOr<std::string> frame =
        agent_tool::ReadFrame(fd, agent_tool::kMaxFrame, absl::Seconds(10));
    absl::StatusOr<agent_tool::EvalRequest> r =
        frame.ok() ? agent_tool::ParseRequest(*frame)
                   : absl::StatusOr<agent_tool::EvalRequest>(frame.status());
    if (r.ok()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(*r);
      }
      (void)agent_tool::WriteFrame(fd, agent_tool::EncodeReply(reply_));
    }
    close(fd);
  }
}

}  // namespace ptxbench::testing
