#ifndef PTXBENCH_EXECUTOR_FAULT_INJECTION_H_
#define PTXBENCH_EXECUTOR_FAULT_INJECTION_H_

// The faults a simulated executor (worker or gateway) injects on request
// (--failure-rate, --crash-rate), for tests and benchmarks of how the
// scheduler recovers: one copy for both executors, which differ only in the
// failure they report.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "ptxbench/v1/executor.pb.h"

namespace ptxbench::executor {

struct FaultRates {
  // Probability that a task fails (the executor says how).
  double failure_rate = 0;
  // Probability that the process dies right after leasing a task.
  double crash_rate = 0;
  // How to die (default: _exit(70)); tests replace it. Returning from it
  // reports an INFRA failure instead.
  std::function<void()> crash;
};

// Thread-safe. Each draw is a deterministic value in [0, 1) from (salt,
// seed, what is drawn, task id, lease id): a run is reproducible, a
// re-leased task draws anew, and executors of different salts draw apart.
class FaultInjector {
 public:
  FaultInjector(std::string salt, uint64_t seed, FaultRates rates);

  // Call right after leasing `task`: when its crash draw hits, logs it and
  // calls `crash`; if that returns, the INFRA failure to report. nullopt:
  // no crash, carry on.
  std::optional<ptxbench::v1::CompleteRequest> CrashAfterLease(
      const ptxbench::v1::Task& task) const;

  // Whether `task`'s failure draw hits.
  bool Fails(const ptxbench::v1::Task& task) const;

 private:
  double Draw(const ptxbench::v1::Task& task, absl::string_view what) const;

  const std::string salt_;
  const uint64_t seed_;
  FaultRates rates_;
};

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_FAULT_INJECTION_H_
