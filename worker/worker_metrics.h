#ifndef PTXBENCH_WORKER_WORKER_METRICS_H_
#define PTXBENCH_WORKER_WORKER_METRICS_H_

// What a worker has done, for its /metrics page (--status-listen) and its
// periodic stats log line (docs/OBSERVABILITY.md lists every metric).
//
// GPU time has two measures per GPU:
//   held:       from GpuPool::Acquire to Release for one evaluation — the GPU
//               is reserved for it and no other evaluation may use it;
//   timed work: the wall time of the sandboxed ptxbench-runner process of
//               that evaluation (its CUDA setup, correctness checks and
//               timed trials of every workload), measured by the worker.
// The duty cycle is timed work / held: the share of the time a GPU is held
// that the runner spends on it; the rest is the worker's own work around
// it (sandbox setup, reading results, health checks after a crash).
//
// Thread-safe.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
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
  WorkerMetrics(std::vector<Gpu> gpus, sandbox::Protections protections);

  // A task's outcome as the handler returns it: an evaluation by status, or
  // a failure report.
  void Reported(const ptxbench::v1::CompleteRequest& report);
  void Compiled(absl::Duration d) { compile_seconds_.ObserveDuration(d); }
  void GpuHeld(int gpu, absl::Duration d);
  void GpuTimedWork(int gpu, absl::Duration d);
  // The runner process died by a signal or was killed at its deadline.
  void RunnerCrashed();

  std::string Prometheus() const;
  // Logs one "stats" line per GPU: held and timed-work seconds and the duty
  // cycle over the time since the previous call (since the start at first).
  void LogStats();

 private:
  struct GpuTime {
    std::string model;
    double held_s = 0;
    double timed_s = 0;
  };
  const sandbox::Protections protections_;
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
