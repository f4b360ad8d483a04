#ifndef PTXBENCH_WORKER_WORKER_METRICS_H_
#define PTXBENCH_WORKER_WORKER_METRICS_H_

// What a worker has done, for its /metrics page (--status-listen) and its
// periodic stats log line (docs/OBSERVABILITY.md lists every metric).
//
// GPU time has three measures per GPU:
//   held:       wall time the worker has held the GPU for evaluation, from
//               its start until now (or until the GPU was taken out of
//               service) — one worker owns its node's GPUs;
//   busy:       from GpuPool::Acquire to Release, summed over evaluations:
//               reserved for one, no other may use it;
//   timed work: the wall time of the sandboxed ptxbench-runner processes on
//               it (CUDA setup, correctness checks and timed trials of every
//               workload), measured by the worker.
// The duty cycle is timed work / held: the share of the time a GPU is held
// that it spends in timed work. It falls when GPUs wait for kernels to
// compile (too few slots), for the scheduler (an empty queue) or for the
// worker's own work around a run (busy - timed work).
//
// Thread-safe.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/prometheus.h"
#include "executor/task_handler.h"
#include "ptxbench/v1/executor.pb.h"
#include "sandbox/protections.h"

namespace ptxbench::worker {

class WorkerMetrics {
 public:
  struct Gpu {
    int index = 0;
    std::string model;
  };
  // `gpus`: the GPUs the worker evaluates on (empty: compile-only), shown
  // from the start at zero; `protections`: what the sandbox probe found.
  // `clock` (not owned; Clock::Real() when null) times the held GPUs.
  WorkerMetrics(std::vector<Gpu> gpus, sandbox::Protections protections,
                const Clock* clock = nullptr);

  // A task's outcome as the handler returns it: an evaluation by status, or
  // a failure report.
  void Reported(const ptxbench::v1::CompleteRequest& report);
  void Compiled(absl::Duration d) { compile_seconds_.ObserveDuration(d); }
  void GpuBusy(int gpu, absl::Duration d);
  void GpuTimedWork(int gpu, absl::Duration d);
  // The GPU was taken out of service: its held time stops.
  void GpuRetired(int gpu);
  // The runner process died by a signal or was killed at its deadline.
  void RunnerCrashed();

  std::string Prometheus() const;
  // Logs one "stats" line per GPU: held and timed-work seconds and the duty
  // cycle over the time since the previous call (since the start at first).
  void LogStats();

 private:
  struct GpuTime {
    std::string model;
    double held_s = 0;  // at `since` (or for good when retired)
    double busy_s = 0;
    double timed_s = 0;
    absl::Time since;
    bool retired = false;
  };
  // `gpus_` with every held time brought to now.
  std::map<int, GpuTime> Now() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const sandbox::Protections protections_;
  const Clock* const clock_;
  prometheus::Histogram compile_seconds_{prometheus::DurationBuckets(0.01, 500)};
  mutable absl::Mutex mu_;
  std::map<int, GpuTime> gpus_ ABSL_GUARDED_BY(mu_);
  std::map<int, GpuTime> logged_ ABSL_GUARDED_BY(mu_);  // gpus_ at the last LogStats
  std::map<ptxbench::v1::EvalStatus, int64_t> evaluations_ ABSL_GUARDED_BY(mu_);
  int64_t failure_reports_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t runner_crashes_ ABSL_GUARDED_BY(mu_) = 0;
};

// Runs `inner` and records each outcome in `metrics` (Reported). Neither is
// owned.
class MeteredHandler final : public executor::TaskHandler {
 public:
  MeteredHandler(executor::TaskHandler* inner, WorkerMetrics* metrics)
      : inner_(inner), metrics_(metrics) {}
  ptxbench::v1::CompleteRequest Run(const ptxbench::v1::Task& task,
                                    const std::atomic<bool>& cancelled) override;

 private:
  executor::TaskHandler* inner_;
  WorkerMetrics* metrics_;
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_WORKER_METRICS_H_
