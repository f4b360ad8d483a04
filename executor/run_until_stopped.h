#ifndef PTXBENCH_EXECUTOR_RUN_UNTIL_STOPPED_H_
#define PTXBENCH_EXECUTOR_RUN_UNTIL_STOPPED_H_

#include <string>

#include "executor/executor_runner.h"

namespace ptxbench::executor {

// The tail of every executor daemon's main(): runs `runner` until it is
// drained or stopped by signals (daemon::BlockStopSignals must have run), logs a
// failure, and returns the process exit code (0 or 1). The first stop
// signal drains: no new lease, the tasks held finish and are reported
// within --stop-grace-s; when that runs out, or at a second signal, the
// runner stops and hands the rest back to the scheduler (Stop()).
int RunUntilStopped(ExecutorRunner& runner, const std::string& daemon);

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_RUN_UNTIL_STOPPED_H_
