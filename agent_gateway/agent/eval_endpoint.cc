#include "agent_gateway/agent/eval_endpoint.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/utf8.h"

namespace ptxbench::agent_gateway {

using agent_tool::EvalReply;
using agent_tool::EvalRequest;

namespace {

EvalReply Refused(const std::string& why) { return {2, absl::StrCat("refused: ", why)}; }

}  // namespace

EvalEndpoint::EvalEndpoint(Settings settings, Evaluate evaluate, BudgetLine budget)
    : settings_(std::move(settings)),
      evaluate_(std::move(evaluate)),
      budget_(std::move(budget)),
      server_(kMaxConnections, [this](int fd) { Answer(fd); }) {}

EvalEndpoint::~EvalEndpoint() { server_.Stop(); }

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
  // The agent can write to its socket directly: its source becomes the
  // AgentEval request's `string` field, which the scheduler would refuse to
  // parse (the gateway retrying it as "scheduler away" until its wait ran
  // out). Today's JSON reader already refuses such bytes; this says why.
  if (const std::string bad = DescribeInvalidUtf8(request.source); !bad.empty()) {
    return Refused(absl::StrCat("the kernel is not UTF-8 text: ", bad,
                                "; nothing was evaluated"));
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
  EvalReply reply = evaluate_(turn, request.source, request.profile);
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

bool EvalEndpoint::Listen(const std::string& path) { return server_.Listen(path); }

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
}

}  // namespace ptxbench::agent_gateway
