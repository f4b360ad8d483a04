#ifndef PTXBENCH_EXECUTOR_HEALTH_H_
#define PTXBENCH_EXECUTOR_HEALTH_H_

// An executor daemon's answer to /healthz (daemon/status_server.h).

#include <functional>

#include "absl/status/status.h"
#include "executor/executor_runner.h"

namespace ptxbench::executor {

// kUnavailable until `runner` is registered with the scheduler, then
// `more()` (when set).
absl::Status ExecutorHealth(const ExecutorRunner& runner,
                            const std::function<absl::Status()>& more = nullptr);

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_HEALTH_H_
