#ifndef PTXBENCH_SCHEDULER_STATE_EXECUTOR_REGISTRY_H_
#define PTXBENCH_SCHEDULER_STATE_EXECUTOR_REGISTRY_H_

// The executors (gateways and workers) the scheduler knows: registration,
// draining, liveness and the tasks each one holds. Registrations and drains
// are kept in the executors table so they survive a restart; liveness and
// held tasks live in memory only (Core::Load rebuilds the held tasks from
// the leases). Internal to the scheduler.
//
// Threading: as Core, which owns it (the writer thread, or one test thread).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ptxbench/v1/client.pb.h"
#include "ptxbench/v1/executor.pb.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

class ExecutorRegistry {
 public:
  struct Options {
    absl::Duration lease_ttl;
    absl::Duration heartbeat_interval;
    // An executor not seen for this long is "lost".
    absl::Duration lost_after;
  };
  struct Executor {
    ptxbench::v1::ExecutorInfo info;
    std::set<int64_t> tasks;  // the tasks it holds a lease on
    // The name of the token it registered under: only calls with that token
    // may lease, heartbeat or report as this executor. "" for one registered
    // before tokens existed, or whose token tests leave out.
    std::string owner;
    // Its token was revoked while it ran: it gets no new task, not even from
    // a long poll parked before the revocation. In memory only: after a
    // restart every call with that token is refused anyway.
    bool owner_revoked = false;
    // It said goodbye (Leave): gone for good, not lost. Also draining.
    bool stopped = false;
  };

  ExecutorRegistry(storage::Database* db, Options options) : db_(db), options_(options) {}

  // Reads the registered executors; each counts as seen at `now` (its
  // heartbeats could not reach a stopped scheduler).
  absl::Status Load(absl::Time now);
  // Registers (or re-registers) an executor under the token named `owner`;
  // INVALID_ARGUMENT for a kind other than WORKER or GATEWAY,
  // PERMISSION_DENIED for an executor id another token registered. A
  // re-registered executor stays draining.
  absl::StatusOr<ptxbench::v1::RegisterResponse> Register(
      const ptxbench::v1::RegisterRequest& request, const std::string& owner, absl::Time now);
  // OK when `owner` registered `executor_id`, or it is unknown (the caller
  // then tells it to register); PERMISSION_DENIED otherwise.
  absl::Status CheckOwner(const std::string& executor_id, const std::string& owner) const;
  // NOT_FOUND for an unknown executor.
  absl::Status Drain(const std::string& executor_id);
  // Drains it for good: it left (Leave). NOT_FOUND for an unknown executor.
  absl::Status MarkStopped(const std::string& executor_id);
  // Marks every executor registered under the token named `owner`.
  void OwnerRevoked(const std::string& owner);

  // nullptr for an unknown executor.
  Executor* Find(const std::string& executor_id);
  const Executor* Find(const std::string& executor_id) const;
  // The executor holding a lease, created when unknown (a lease found by
  // Load whose executor never registered again).
  Executor& Holder(const std::string& executor_id) { return executors_[executor_id]; }
  bool IsKnown(const std::string& executor_id) const;
  bool IsDraining(const std::string& executor_id) const;
  // "active", "draining", "stopped" or "lost".
  std::string Status(const Executor& e, absl::Time now) const;
  std::vector<ptxbench::v1::ExecutorInfo> List(absl::Time now) const;
  const std::map<std::string, Executor>& all() const { return executors_; }

 private:
  // Sets the executors table's draining column (kDrainingStopped: left).
  absl::Status SetDraining(Executor& e, int64_t value);

  storage::Database* db_;
  Options options_;
  std::map<std::string, Executor> executors_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STATE_EXECUTOR_REGISTRY_H_
