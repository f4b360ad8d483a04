#ifndef PTXBENCH_EXECUTOR_EXECUTOR_RUNNER_INTERNAL_H_
#define PTXBENCH_EXECUTOR_EXECUTOR_RUNNER_INTERNAL_H_

// Private to ExecutorRunner's two files (executor_runner.cc: registration,
// leases, tasks, heartbeats; executor_reports.cc: reporting finished tasks):
// how a call's status is read, and the tracked client context that every call
// to the scheduler is made with (but the courtesy calls made while stopping).

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/executor_runner.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"

namespace ptxbench::executor {
namespace runner_internal {

// The scheduler may be restarting or overloaded: the call can be repeated.
inline bool IsTransient(const grpc::Status& s) {
  switch (s.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::ABORTED:
      return true;
    default:
      return false;
  }
}

// The scheduler will not take this call from us, whatever we retry.
inline bool IsRefusal(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
         s.error_code() == grpc::StatusCode::PERMISSION_DENIED;
}

inline std::string ErrorText(const grpc::Status& s) {
  return absl::StrCat(absl::StatusCodeToString(static_cast<absl::StatusCode>(s.error_code())), ": ",
                      s.error_message());
}

inline std::string OutcomeName(const ptxbench::v1::CompleteRequest& r) {
  switch (r.outcome_case()) {
    case ptxbench::v1::CompleteRequest::kLlm:
      return "llm";
    case ptxbench::v1::CompleteRequest::kEval:
      return ptxbench::v1::EvalStatus_Name(r.eval().status());
    case ptxbench::v1::CompleteRequest::kFailure:
      return absl::StrCat("failure:", ptxbench::v1::FailureClass_Name(r.failure().failure_class()));
    default:
      return "none";
  }
}

inline std::string Ms(absl::Duration d) { return absl::StrCat(absl::ToInt64Milliseconds(d), "ms"); }

}  // namespace runner_internal

// Registers a context in calls_ for its lifetime. A context created after
// Stop() is cancelled at once, so no call can outlive a stop unnoticed.
class ExecutorRunner::TrackedContext {
 public:
  TrackedContext(ExecutorRunner* runner, absl::Duration timeout, bool is_poll) : runner_(runner) {
    ctx_.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    // Wait for the channel instead of failing fast while it reconnects: in
    // gRPC 1.51 a fail-fast call on a channel in TRANSIENT_FAILURE reports
    // the stale connect error without noticing that a restarted scheduler
    // listens again, which kept held leases from being reported in time.
    ctx_.set_wait_for_ready(true);
    absl::MutexLock lock(&runner_->mu_);
    runner_->calls_[&ctx_] = is_poll;
    if (runner_->stopping_ || (is_poll && runner_->draining_)) ctx_.TryCancel();
  }
  ~TrackedContext() {
    absl::MutexLock lock(&runner_->mu_);
    runner_->calls_.erase(&ctx_);
  }
  grpc::ClientContext* get() { return &ctx_; }

 private:
  ExecutorRunner* runner_;
  grpc::ClientContext ctx_;
};

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_EXECUTOR_RUNNER_INTERNAL_H_
