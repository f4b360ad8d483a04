#ifndef PTXBENCH_SCHEDULER_CORE_ROWS_H_
#define PTXBENCH_SCHEDULER_CORE_ROWS_H_

// Typed access to the rows Core reads and writes (tasks, trajectories), so the
// SQL for them lives in one place. Internal to the scheduler.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ptxbench/v1/common.pb.h"
#include "scheduler/schema.h"
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

struct TrajectoryRow {
  int64_t rowid = 0;
  std::string id;
  int64_t experiment = 0;
  std::string experiment_id;
  std::string model;
  std::string definition;
  std::string prompt_tag;
  int num_turns = 0;
  double target_speedup = 1;
  ptxbench::v1::TrajectoryState state = ptxbench::v1::AWAITING_MODEL;
  ptxbench::v1::FailureClass failure_class = ptxbench::v1::FAILURE_CLASS_UNSPECIFIED;
  std::string reason;
  int turns_completed = 0;
  double best_speedup = 0;
  bool correct = false;
  bool simulated = false;
  double cost_usd = 0;
  std::string system_blob;
  std::string task_blob;
  std::vector<std::string> workloads;  // empty: all of the definition's
};

// "tk_<rowid>" <-> rowid. ParseTaskId fails INVALID_ARGUMENT on other shapes.
std::string FormatTaskId(int64_t rowid);
absl::StatusOr<int64_t> ParseTaskId(const std::string& task_id);

absl::StatusOr<TaskRow> ReadTask(storage::Database& db, int64_t rowid);
absl::StatusOr<TrajectoryRow> ReadTrajectory(storage::Database& db, int64_t rowid);
absl::StatusOr<TrajectoryRow> ReadTrajectoryById(storage::Database& db, const std::string& id);

// Writes the mutable columns of a trajectory (state, counters, reason, ...).
absl::Status WriteTrajectory(storage::Database& db, const TrajectoryRow& row, int64_t now_ms);

// Sets a task's state and retry bookkeeping (not its lease columns).
absl::Status WriteTaskState(storage::Database& db, const TaskRow& row, int64_t not_before_ms);

bool IsTerminal(ptxbench::v1::TrajectoryState state);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_CORE_ROWS_H_
