#include "executor/health.h"

namespace ptxbench::executor {

absl::Status ExecutorHealth(const ExecutorRunner& runner,
                            const std::function<absl::Status()>& more) {
  if (runner.executor_id().empty()) {
    return absl::UnavailableError("not registered with the scheduler");
  }
  return more ? more() : absl::OkStatus();
}

}  // namespace ptxbench::executor
