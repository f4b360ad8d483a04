#ifndef PTXBENCH_WORKER_RUNNER_MEASURE_PROGRESS_H_
#define PTXBENCH_WORKER_RUNNER_MEASURE_PROGRESS_H_

// Progress of the runner on its stderr, which the worker shows (its tail)
// when a run ends badly: one line per step, and a reporter thread that says
// where the harness is when it made no progress for 10 s.

#include <functional>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxbench::runner {

// "ptxbench-runner: [1.234 s] <what>".
void Progress(absl::string_view what);
// Notes where the harness is now (a static string), for the reporter.
void At(const char* where);
// Starts the reporter thread (once per process). When the harness has made
// no progress for `act_after`, it calls `act` once (the harness kills the
// candidate host: whatever it holds up is then released, and the harness
// reports it instead of hanging until the worker's deadline).
void StartStuckReporter(absl::Duration act_after, std::function<void()> act);
// Seconds since the process started.
double SecondsSinceStart();

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_MEASURE_PROGRESS_H_
