#include "executor/task_handler.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace ptxbench::executor {

TaskHandler::~TaskHandler() = default;
AsyncTaskHandler::~AsyncTaskHandler() = default;

bool SleepUnlessCancelled(absl::Duration d, const std::atomic<bool>& cancelled) {
  const absl::Time until = absl::Now() + d;
  for (;;) {
    if (cancelled) return false;
    absl::Duration left = until - absl::Now();
    if (left <= absl::ZeroDuration()) return true;
    absl::SleepFor(std::min(left, absl::Milliseconds(5)));
  }
}

}  // namespace ptxbench::executor

namespace ptxbench::executor {

ptxbench::v1::CompleteRequest FailureReport(ptxbench::v1::FailureClass failure_class,
                                            std::string message, int64_t retry_after_ms) {
  ptxbench::v1::CompleteRequest out;
  out.mutable_failure()->set_failure_class(failure_class);
  out.mutable_failure()->set_message(std::move(message));
  out.mutable_failure()->set_retry_after_ms(retry_after_ms);
  return out;
}

}  // namespace ptxbench::executor
