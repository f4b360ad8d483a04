#include "scheduler/core_rows.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

std::string FormatTaskId(int64_t rowid) { return absl::StrCat("tk_", rowid); }

absl::StatusOr<int64_t> ParseTaskId(const std::string& task_id) {
  int64_t rowid = 0;
  if (!absl::StartsWith(task_id, "tk_") ||
      !absl::SimpleAtoi(absl::string_view(task_id).substr(3), &rowid)) {
    return absl::InvalidArgumentError(absl::StrCat("malformed task id '", task_id, "'"));
  }
  return rowid;
}

absl::StatusOr<TaskRow> ReadTask(storage::Database& db, int64_t rowid) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db.Cached("SELECT experiment, trajectory, turn, kind, state, attempt, deaths, "
                "infra_failures, api_failures, lease_id, executor, last_error, created_ms "
                "FROM tasks WHERE rowid = ?"));
  s->BindInt64(1, rowid);
  PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no task ", FormatTaskId(rowid)));
  TaskRow t;
  t.rowid = rowid;
  t.experiment = s->ColumnInt64(0);
  t.trajectory = s->ColumnInt64(1);
  t.turn = static_cast<int>(s->ColumnInt64(2));
  t.kind = static_cast<StepKind>(s->ColumnInt64(3));
  t.state = static_cast<TaskState>(s->ColumnInt64(4));
  t.attempt = static_cast<int>(s->ColumnInt64(5));
  t.deaths = static_cast<int>(s->ColumnInt64(6));
  t.infra_failures = static_cast<int>(s->ColumnInt64(7));
  t.api_failures = static_cast<int>(s->ColumnInt64(8));
  t.lease_id = s->ColumnText(9);
  t.executor = s->ColumnText(10);
  t.last_error = s->ColumnText(11);
  t.created_ms = s->ColumnInt64(12);
  s->Reset();
  return t;
}

namespace {

constexpr char kTrajectoryColumns[] =
    "j.rowid, j.id, j.experiment, e.id, j.model, j.definition, j.prompt_tag, "
    "j.num_turns, j.target_speedup, j.state, j.failure_class, j.reason, "
    "j.turns_completed, j.best_speedup, j.correct, j.simulated, j.cost_usd, "
    "j.system_blob, j.task_blob, j.workloads FROM trajectories j JOIN experiments e ON "
    "e.rowid = j.experiment ";

absl::StatusOr<TrajectoryRow> ReadOneTrajectory(storage::Statement* s,
                                                const std::string& what) {
  PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) return absl::NotFoundError(absl::StrCat("unknown trajectory ", what));
  TrajectoryRow t;
  t.rowid = s->ColumnInt64(0);
  t.id = s->ColumnText(1);
  t.experiment = s->ColumnInt64(2);
  t.experiment_id = s->ColumnText(3);
  t.model = s->ColumnText(4);
  t.definition = s->ColumnText(5);
  t.prompt_tag = s->ColumnText(6);
  t.num_turns = static_cast<int>(s->ColumnInt64(7));
  t.target_speedup = s->ColumnDouble(8);
  t.state = static_cast<v1::TrajectoryState>(s->ColumnInt64(9));
  t.failure_class = static_cast<v1::FailureClass>(s->ColumnInt64(10));
  t.reason = s->ColumnText(11);
  t.turns_completed = static_cast<int>(s->ColumnInt64(12));
  t.best_speedup = s->ColumnDouble(13);
  t.correct = s->ColumnInt64(14) != 0;
  t.simulated = s->ColumnInt64(15) != 0;
  t.cost_usd = s->ColumnDouble(16);
  t.system_blob = s->ColumnText(17);
  t.task_blob = s->ColumnText(18);
  t.workloads = DecodeWorkloads(s->ColumnText(19));
  s->Reset();
  return t;
}

}  // namespace

absl::StatusOr<TrajectoryRow> ReadTrajectory(storage::Database& db, int64_t rowid) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db.Cached(absl::StrCat("SELECT ", kTrajectoryColumns, "WHERE j.rowid = ?")));
  s->BindInt64(1, rowid);
  return ReadOneTrajectory(s, absl::StrCat("#", rowid));
}

absl::StatusOr<TrajectoryRow> ReadTrajectoryById(storage::Database& db,
                                                 const std::string& id) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db.Cached(absl::StrCat("SELECT ", kTrajectoryColumns, "WHERE j.id = ?")));
  s->BindText(1, id);
  return ReadOneTrajectory(s, id);
}

absl::Status WriteTrajectory(storage::Database& db, const TrajectoryRow& t,
                             int64_t now_ms) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db.Cached("UPDATE trajectories SET state = ?, failure_class = ?, reason = ?, "
                "turns_completed = ?, best_speedup = ?, correct = ?, simulated = ?, "
                "cost_usd = ?, num_turns = ?, updated_ms = ? WHERE rowid = ?"));
  s->BindInt64(1, t.state)
      .BindInt64(2, t.failure_class)
      .BindText(3, t.reason)
      .BindInt64(4, t.turns_completed)
      .BindDouble(5, t.best_speedup)
      .BindBool(6, t.correct)
      .BindBool(7, t.simulated)
      .BindDouble(8, t.cost_usd)
      .BindInt64(9, t.num_turns)
      .BindInt64(10, now_ms)
      .BindInt64(11, t.rowid);
  return s->Run();
}

absl::Status WriteTaskState(storage::Database& db, const TaskRow& t,
                            int64_t not_before_ms) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db.Cached("UPDATE tasks SET state = ?, deaths = ?, infra_failures = ?, "
                "api_failures = ?, not_before_ms = ?, last_error = ? WHERE rowid = ?"));
  s->BindInt64(1, static_cast<int>(t.state))
      .BindInt64(2, t.deaths)
      .BindInt64(3, t.infra_failures)
      .BindInt64(4, t.api_failures)
      .BindInt64(5, not_before_ms)
      .BindText(6, t.last_error)
      .BindInt64(7, t.rowid);
  return s->Run();
}

bool IsTerminal(v1::TrajectoryState state) {
  return state != v1::AWAITING_MODEL && state != v1::AWAITING_EVAL;
}

}  // namespace ptxbench::scheduler
