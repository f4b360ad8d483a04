#ifndef PTXBENCH_SCHEDULER_STORE_SCHEMA_H_
#define PTXBENCH_SCHEDULER_STORE_SCHEMA_H_

// Room scheduler/store/: the database's rows and their rules. Owns the
// schema and its migrations (this header), the transition tables every state
// change goes through (transitions.h) and the row stores (experiment, task,
// trajectory, turn, token) and the event log. May include: spec/.
//
// The scheduler's database: tables, their migrations, and the enums stored in
// them. The scheduler is the only writer; readers (status, show) open it
// read-only.

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

// "PTXB" in ASCII: PRAGMA application_id of every ptxbench database.
inline constexpr uint32_t kApplicationId = 0x50545842;

// Task states as stored in tasks.state.
enum class TaskState : int {
  kQueued = 0,
  kLeased = 1,
  kDone = 2,
  kFailed = 3,    // ended its trajectory (terminal, or out of retries)
  kPoisoned = 4,  // its executors kept dying with it
  kCancelled = 5,
};

// Task kinds as stored in tasks.kind (= ptxbench.v1.TaskKind). An agent
// task is one coding-agent session; its evaluations are eval tasks.
enum class StepKind : int { kLlm = 1, kEval = 2, kAgent = 3 };
// "llm", "eval", "agent": for logs, events and metric labels.
const char* StepKindName(StepKind kind);

// A stored enum value as SQL text, for queries that spell states as literals:
// SQLite uses the partial index tasks_live only for a WHERE clause that
// literally implies the IN list of its WHERE, which a bound parameter does not.
std::string SqlValue(TaskState state);
std::string SqlValue(StepKind kind);
std::string SqlValue(ptxbench::v1::TrajectoryState state);
// "`column` IN (...)" of `states` as literals.
std::string TaskStateCondition(absl::string_view column, std::initializer_list<TaskState> states);
// `column` IN (QUEUED, LEASED): the live tasks, the condition of tasks_live.
std::string LiveTaskCondition(absl::string_view column);

// trajectories.workloads: the workloads a trajectory is evaluated on,
// newline-separated (workload ids hold no control characters); '' is all of
// the definition's. trajectories.held_out, those of them its model is never
// shown, the same way ('' is none).
std::string EncodeWorkloads(const std::vector<std::string>& workloads);
std::vector<std::string> DecodeWorkloads(const std::string& column);

// experiments.architectures: sm_NN names, comma-separated.
std::string EncodeArchitectures(const std::vector<std::string>& architectures);
std::vector<std::string> DecodeArchitectures(const std::string& column);

// Steps `s` to its end and resets it: the INTEGER values of its column 0.
absl::StatusOr<std::vector<int64_t>> ReadInt64Column(storage::Statement* s);

// Opens (creating if needed) and migrates the scheduler database at `path`.
// Refuses a file that is not a ptxbench database or has a newer schema.
absl::StatusOr<std::unique_ptr<storage::Database>> OpenSchedulerDatabase(
    const std::string& path);

// Opens an existing scheduler database read-only (for queries).
absl::StatusOr<std::unique_ptr<storage::Database>> OpenReadOnly(const std::string& path);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_SCHEMA_H_
