#ifndef PTXBENCH_WORKER_REFERENCE_TIMES_H_
#define PTXBENCH_WORKER_REFERENCE_TIMES_H_

// The reference figures a worker's evaluations measured, kept for the next
// evaluations on the same GPU (docs/MEASUREMENT.md, "Timing"). The reference
// (cuBLAS, cuDNN, PyTorch) is the same code on the same shapes every time,
// so timing it again in every evaluation costs GPU time and gives a figure
// equal within its own spread. A figure is reused only for the same GPU,
// definition text, workload (axes and fixed inputs), reference choice and
// timing method, and only for `max_age` after it was measured.
//
// The GPU's state drifts (clocks under its power cap, temperature): a kernel
// that heats the card could slow one reference timing and so inflate every
// speedup that reuses it. So every evaluation still times one workload's
// reference afresh, the one measured longest ago, and a fresh figure more
// than kDriftLimit away from the one it replaces drops every other figure of
// that GPU. Figures come from the runner's reference lines, which only the
// harness writes, before any candidate code runs.
//
// Held in memory: a restarted worker times everything again. Thread-safe.

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "worker/gpu/device_info.h"
#include "worker/runner/wire/job.h"

namespace ptxbench::worker {

class ReferenceTimes {
 public:
  // A fresh figure this far (relative) from the kept one: the GPU changed.
  static constexpr double kDriftLimit = 0.03;

  // `max_age` zero: nothing is reused. `clock` not owned.
  explicit ReferenceTimes(absl::Duration max_age, const Clock* clock = Clock::Real());

  // The figures still fresh for `job`'s workloads on `gpu`, each log
  // prefixed with when it was measured; where every workload has one, all
  // but the oldest, which the run times again.
  std::vector<runner::KnownReference> Lookup(const gpu::GpuInfo& gpu,
                                             const runner::RunnerJob& job) const;
  // Keeps what a run of `job` on `gpu` timed (RunnerOutput::references);
  // figures of workloads the job did not hold are ignored. Returns, in
  // words, the drift that dropped the GPU's other figures; empty if none.
  std::string Store(const gpu::GpuInfo& gpu, const runner::RunnerJob& job,
                    const std::vector<runner::KnownReference>& timed);

 private:
  struct Entry {
    runner::KnownReference reference;
    absl::Time measured;
    std::string gpu;  // GpuKey: what a drift drops
  };
  static std::string GpuKey(const gpu::GpuInfo& gpu);
  static std::string Key(const gpu::GpuInfo& gpu, const runner::RunnerJob& job,
                         const runner::WorkloadSpec& workload);

  const absl::Duration max_age_;
  const Clock* clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_REFERENCE_TIMES_H_
