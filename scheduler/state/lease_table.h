#ifndef PTXBENCH_SCHEDULER_STATE_LEASE_TABLE_H_
#define PTXBENCH_SCHEDULER_STATE_LEASE_TABLE_H_

// The leases held now, in memory (the database holds the same as LEASED
// task rows, and Core::Load rebuilds this from them): who holds each task
// and until when, how many LLM calls each model route has in flight, and the
// deadlines in a lazy heap (an entry is stale once its lease ended or was
// extended). Thread-compatible: Core's writer thread.

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "scheduler/store/schema.h"

namespace ptxbench::scheduler {

class LeaseTable {
 public:
  struct Lease {
    std::string lease_id;
    std::string executor;
    int64_t experiment = 0;
    StepKind kind = StepKind::kLlm;
    std::string route_key;
    absl::Time deadline;
    absl::Time attempt_limit;
  };
  // A lease whose deadline passed: the task, and whether it ran into its
  // attempt's time limit (rather than missing a heartbeat).
  struct Due {
    int64_t task = 0;
    bool past_attempt_limit = false;
  };

  LeaseTable();

  // A new lease id: unique in this process, and salted per process so that
  // ids do not repeat across restarts and cannot be guessed.
  std::string NewLeaseId();
  // `task` is now held under `lease` (an LLM step counts in its route's
  // in-flight calls, an agent session in its experiment's sessions).
  void Add(int64_t task, Lease lease);
  // Drops `task`'s lease; the lease it was, or nullopt when none was held.
  std::optional<Lease> Remove(int64_t task);
  const Lease* Find(int64_t task) const;
  bool Holds(int64_t task) const { return leases_.contains(task); }
  // Moves `task`'s deadline to `deadline` (no later than its attempt limit).
  void Extend(int64_t task, absl::Time deadline);
  // The next lease whose deadline is at or before `now`; nullopt when none
  // is due. The caller ends it (Remove): until then a later call may return
  // it again.
  std::optional<Due> PopDue(absl::Time now);
  // LLM calls in flight on `route_key`.
  int InFlight(const std::string& route_key) const;
  // Agent sessions of `experiment` held.
  int Sessions(int64_t experiment) const;
  const std::unordered_map<int64_t, Lease>& all() const { return leases_; }

 private:
  using Deadline = std::pair<absl::Time, int64_t>;  // when, task
  std::unordered_map<int64_t, Lease> leases_;
  std::priority_queue<Deadline, std::vector<Deadline>, std::greater<Deadline>> deadlines_;
  std::unordered_map<std::string, int> inflight_;  // route key -> LLM calls
  std::unordered_map<int64_t, int> sessions_;      // experiment -> agent sessions
  uint64_t salt_ = 0;
  uint64_t counter_ = 0;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STATE_LEASE_TABLE_H_
