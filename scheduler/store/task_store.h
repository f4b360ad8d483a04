#ifndef PTXBENCH_SCHEDULER_STORE_TASK_STORE_H_
#define PTXBENCH_SCHEDULER_STORE_TASK_STORE_H_

// The tasks table: every SQL statement on it that Core runs. A task's state
// is written only by Transit and Lease, which take it from the task table of
// scheduler/store/transitions.h. Internal to the scheduler.
//
// Threading: as Core (the writer thread, or one test thread).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/store/schema.h"
#include "scheduler/store/transitions.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

struct TaskRow {
  int64_t rowid = 0;
  int64_t experiment = 0;
  int64_t trajectory = 0;
  int turn = 0;
  StepKind kind = StepKind::kLlm;
  TaskState state = TaskState::kQueued;
  int attempt = 0;
  int deaths = 0;
  int infra_failures = 0;
  int api_failures = 0;
  std::string lease_id;
  std::string executor;
  std::string last_error;
  int64_t created_ms = 0;
};

// A queued or leased task as Core::Load needs it.
struct LiveTask {
  int64_t rowid = 0;
  int64_t experiment = 0;
  StepKind kind = StepKind::kLlm;
  TaskState state = TaskState::kQueued;
  int64_t not_before_ms = 0;
  std::string lease_id;
  std::string executor;
  int64_t lease_deadline_ms = 0;
  std::string model;  // its trajectory's
  int64_t trajectory = 0;
  int turn = 0;
};

// "tk_<rowid>" <-> rowid. ParseTaskId fails INVALID_ARGUMENT on other shapes.
std::string FormatTaskId(int64_t rowid);
absl::StatusOr<int64_t> ParseTaskId(const std::string& task_id);

class TaskStore {
 public:
  explicit TaskStore(storage::Database* db) : db_(db) {}

  // NOT_FOUND for an unknown rowid.
  absl::StatusOr<TaskRow> Read(int64_t rowid);
  // Inserts a QUEUED task; returns its rowid.
  absl::StatusOr<int64_t> Insert(int64_t experiment, int64_t trajectory, int turn,
                                 StepKind kind, int64_t now_ms);
  // Moves `task` by `event` (INTERNAL when the table refuses it), then writes
  // its state, failure counters, last_error and `not_before_ms`.
  absl::Status Transit(TaskRow& task, TaskEvent event, int64_t not_before_ms);
  // kLease: QUEUED -> LEASED with one more attempt and the lease columns.
  absl::Status Lease(TaskRow& task, const std::string& lease_id, int64_t deadline_ms,
                     const std::string& executor);

  // The queued and leased tasks of a trajectory.
  absl::StatusOr<std::vector<int64_t>> LiveOf(int64_t trajectory);
  // Its latest FAILED or POISONED task, if any.
  absl::StatusOr<std::optional<int64_t>> LastEndedOf(int64_t trajectory);
  // Its task of turn 0 (the first LLM step).
  absl::StatusOr<int64_t> FirstOf(int64_t trajectory);
  // Every queued or leased task, in rowid order.
  absl::Status ForEachLive(const std::function<void(const LiveTask&)>& fn);

 private:
  storage::Database* db_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_TASK_STORE_H_
