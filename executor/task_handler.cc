#include "executor/task_handler.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace ptxbench::executor {

TaskHandler::~TaskHandler() = default;

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
