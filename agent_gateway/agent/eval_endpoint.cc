#include "agent_gateway/agent/eval_endpoint.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ptxbench::agent_gateway {

using agent_tool::EvalReply;
using agent_tool::EvalRequest;

namespace {

EvalReply Refused(const std::string& why) { return {2, absl::StrCat("refused: ", why)}; }

}  // namespace

EvalEndpoint::EvalEndpoint(Settings settings, Evaluate evaluate, BudgetLine budget)
    : settings_(std::move(settings)), evaluate_(std::move(evaluate)), budget_(std::move(budget)) {}

EvalEndpoint::~EvalEndpoint() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  if (listener_ >= 0) shutdown(listener_, SHUT_RDWR);
  if (server_.joinable()) server_.join();
  // Connections hold no reference once counted out; wait for them.
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [this] { return connections_ == 0; });
  if (listener_ >= 0) close(listener_);
  if (!path_.empty()) unlink(path_.c_str());
}

int EvalEndpoint::evaluations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return evaluations_;
}

bool EvalEndpoint::limit_reached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return limit_reached_;
}

absl::Duration EvalEndpoint::blocked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return blocked_;
}

EvalReply EvalEndpoint::Handle(const EvalRequest& request) {
  if (request.op == EvalRequest::Op::kBudget) return {0, budget_()};
  if (request.workload_sha256 != settings_.workload_sha256) {
    return Refused(absl::StrCat("workload mismatch: this session is bound to ",
                                settings_.workload_name,
                                " (the task file it was given); nothing was evaluated"));
  }
  return Evaluated(request);
}

EvalReply EvalEndpoint::Evaluated(const EvalRequest& request) {
  std::unique_lock<std::mutex> lock(mu_);
  // A repeated action id: the same evaluation's reply, once it exists.
  if (replies_.count(request.action_id) || running_.count(request.action_id)) {
    const absl::Time start = absl::Now();
    done_.wait(lock, [&] { return replies_.count(request.action_id) > 0; });
    blocked_ += absl::Now() - start;
    return replies_.at(request.action_id);
  }
  if (in_flight_) {
    return Refused("another evaluation is in progress; wait for its feedback");
  }
  if (settings_.max_evaluations > 0 && evaluations_ >= settings_.max_evaluations) {
    limit_reached_ = true;
    return Refused(absl::StrCat("evaluation limit reached (", evaluations_, " of ",
                                settings_.max_evaluations, "); the session ends"));
  }
  in_flight_ = true;
  running_[request.action_id] = true;
  const int turn = ++evaluations_;
  lock.unlock();
  const absl::Time start = absl::Now();
  EvalReply reply = evaluate_(turn, request.source);
  const absl::Duration waited = absl::Now() - start;
  if (settings_.show_budget) absl::StrAppend(&reply.text, "\n", budget_());
  lock.lock();
  blocked_ += waited;
  in_flight_ = false;
  running_.erase(request.action_id);
  replies_[request.action_id] = reply;
  done_.notify_all();
  return reply;
}

bool EvalEndpoint::Listen(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path.data(), path.size());
  unlink(path.c_str());
  listener_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) return false;
  // 0600 from the start: no moment in which another uid could connect.
  const mode_t old = umask(0177);
  const bool bound = bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  umask(old);
  if (!bound || listen(listener_, kMaxConnections) != 0) return false;
  path_ = path;
  server_ = std::thread([this] { Serve(); });
  return true;
}

void EvalEndpoint::Serve() {
  for (;;) {
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || connections_ >= kMaxConnections) {
      close(fd);  // a flood of connections gets nothing but closed sockets
      continue;
    }
    ++connections_;
    std::thread([this, fd] { Answer(fd); }).detach();
  }
}

void EvalEndpoint::Answer(int fd) {
  absl::StatusOr<std::string> frame =
      agent_tool::ReadFrame(fd, agent_tool::kMaxFrame, absl::Seconds(10));
  if (frame.ok()) {
    absl::StatusOr<EvalRequest> request = agent_tool::ParseRequest(*frame);
    const EvalReply reply =
        request.ok() ? Handle(*request)
                     : Refused(absl::StrCat("malformed request: ", request.status().message()));
    (void)agent_tool::WriteFrame(fd, agent_tool::EncodeReply(reply));
  }
  close(fd);
  std::lock_guard<std::mutex> lock(mu_);
  --connections_;
  done_.notify_all();
}

}  // namespace ptxbench::agent_gateway
