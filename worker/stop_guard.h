#ifndef PTXBENCH_WORKER_STOP_GUARD_H_
#define PTXBENCH_WORKER_STOP_GUARD_H_

// A stop signal given to a worker's whole process tree (Slurm's scancel
// signals every process of a job step, with proctrack/cgroup whatever it
// inherits) can end a build or a measurement midway. The evaluation's
// processes ignore the stop signals (process::IgnoreStopSignals), but nvcc
// installs its own handler and ends ("nvcc: Terminated"), and other tools
// may. So an evaluation that ends in a build failure, a crash or a timeout
// (of itself or of a workload) after the worker took a stop signal is
// handed back (INFRA: the scheduler runs it again, elsewhere) instead of
// being reported as the kernel's failure. Other verdicts stand: no signal
// makes a kernel correct, and wrong numbers, shapes or a vendor library are
// found by checks that ran to their end.

#include <atomic>
#include <functional>

#include "executor/task_handler.h"

namespace ptxbench::worker {

class StopSignalGuard final : public executor::TaskHandler {
 public:
  // `inner` is not owned. `signals_received` counts the stop signals taken
  // so far (daemon::StopSignalsReceived by default).
  explicit StopSignalGuard(executor::TaskHandler* inner,
                           std::function<int()> signals_received = nullptr);
  ptxbench::v1::CompleteRequest Run(const ptxbench::v1::Task& task,
                                    const std::atomic<bool>& cancelled) override;

 private:
  executor::TaskHandler* inner_;
  std::function<int()> signals_received_;
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_STOP_GUARD_H_
