#include "scheduler/store/task_store.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxbench::scheduler {

std::string FormatTaskId(int64_t rowid) { return absl::StrCat("tk_", rowid); }

absl::StatusOr<int64_t> ParseTaskId(const std::string& task_id) {
  int64_t rowid = 0;
  if (!absl::StartsWith(task_id, "tk_") ||
      !absl::SimpleAtoi(absl::string_view(task_id).substr(3), &rowid)) {
    return absl::InvalidArgumentError(absl::StrCat("malformed task id '", task_id, "'"));
  }
  return rowid;
}

absl::StatusOr<TaskRow> TaskStore::Read(int64_t rowid) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT experiment, trajectory, turn, kind, state, attempt, deaths, "
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

absl::StatusOr<int64_t> TaskStore::Insert(int64_t experiment, int64_t trajectory, int turn,
                                          StepKind kind, int64_t now_ms) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("INSERT INTO tasks(experiment, trajectory, turn, kind, state, created_ms) "
                  "VALUES(?,?,?,?,?,?)"));
  s->BindInt64(1, experiment)
      .BindInt64(2, trajectory)
      .BindInt64(3, turn)
      .BindInt64(4, static_cast<int>(kind))
      .BindInt64(5, static_cast<int>(TaskState::kQueued))
      .BindInt64(6, now_ms);
  PTXB_RETURN_IF_ERROR(s->Run());
  return db_->LastInsertRowId();
}

absl::Status TaskStore::Transit(TaskRow& task, TaskEvent event, int64_t not_before_ms) {
  if (event == TaskEvent::kLease) {
    return absl::InternalError("TaskStore::Transit: a lease is taken with TaskStore::Lease");
  }
  PTXB_ASSIGN_OR_RETURN(TaskState next, NextTaskState(task.state, event));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("UPDATE tasks SET state = ?, deaths = ?, infra_failures = ?, "
                  "api_failures = ?, not_before_ms = ?, last_error = ? WHERE rowid = ?"));
  s->BindInt64(1, static_cast<int>(next))
      .BindInt64(2, task.deaths)
      .BindInt64(3, task.infra_failures)
      .BindInt64(4, task.api_failures)
      .BindInt64(5, not_before_ms)
      .BindText(6, task.last_error)
      .BindInt64(7, task.rowid);
  PTXB_RETURN_IF_ERROR(s->Run());
  task.state = next;
  return absl::OkStatus();
}

absl::Status TaskStore::Lease(TaskRow& task, const std::string& lease_id, int64_t deadline_ms,
                              const std::string& executor) {
  PTXB_ASSIGN_OR_RETURN(TaskState next, NextTaskState(task.state, TaskEvent::kLease));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("UPDATE tasks SET state = ?, attempt = attempt + 1, lease_id = ?, "
                  "lease_deadline_ms = ?, executor = ? WHERE rowid = ?"));
  s->BindInt64(1, static_cast<int>(next))
      .BindText(2, lease_id)
      .BindInt64(3, deadline_ms)
      .BindText(4, executor)
      .BindInt64(5, task.rowid);
  PTXB_RETURN_IF_ERROR(s->Run());
  task.state = next;
  ++task.attempt;
  task.lease_id = lease_id;
  task.executor = executor;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> TaskStore::LiveOf(int64_t trajectory) {
  // The SQL is built once (the states are formatted from their enum).
  static const std::string* const kSql = new std::string(absl::StrCat(
      "SELECT rowid FROM tasks WHERE trajectory = ? AND ", LiveTaskCondition("state")));
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s, db_->Cached(*kSql));
  s->BindInt64(1, trajectory);
  return ReadInt64Column(s);
}

absl::StatusOr<std::optional<int64_t>> TaskStore::LastEndedOf(int64_t trajectory) {
  static const std::string* const kSql = new std::string(absl::StrCat(
      "SELECT rowid FROM tasks WHERE trajectory = ? AND ",
      TaskStateCondition("state", {TaskState::kFailed, TaskState::kPoisoned}),
      " ORDER BY rowid DESC LIMIT 1"));
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s, db_->Cached(*kSql));
  s->BindInt64(1, trajectory);
  PTXB_ASSIGN_OR_RETURN(std::vector<int64_t> rows, ReadInt64Column(s));
  if (rows.empty()) return std::nullopt;
  return rows.front();
}

absl::StatusOr<int64_t> TaskStore::FirstOf(int64_t trajectory) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT rowid FROM tasks WHERE trajectory = ? AND turn = 0"));
  s->BindInt64(1, trajectory);
  PTXB_ASSIGN_OR_RETURN(std::vector<int64_t> rows, ReadInt64Column(s));
  if (rows.empty()) return absl::NotFoundError(absl::StrCat("no first task of #", trajectory));
  return rows.front();
}

absl::Status TaskStore::ForEachLive(const std::function<void(const LiveTask&)>& fn) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached(absl::StrCat(
          "SELECT t.rowid, t.experiment, t.kind, t.state, t.not_before_ms, t.lease_id, "
          "t.executor, t.lease_deadline_ms, j.model, t.trajectory, t.turn FROM tasks t "
          "JOIN trajectories j ON j.rowid = t.trajectory WHERE ",
          LiveTaskCondition("t.state"), " ORDER BY t.rowid")));
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    LiveTask t;
    t.rowid = s->ColumnInt64(0);
    t.experiment = s->ColumnInt64(1);
    t.kind = static_cast<StepKind>(s->ColumnInt64(2));
    t.state = static_cast<TaskState>(s->ColumnInt64(3));
    t.not_before_ms = s->ColumnInt64(4);
    t.lease_id = s->ColumnText(5);
    t.executor = s->ColumnText(6);
    t.lease_deadline_ms = s->ColumnInt64(7);
    t.model = s->ColumnText(8);
    t.trajectory = s->ColumnInt64(9);
    t.turn = static_cast<int>(s->ColumnInt64(10));
    fn(t);
  }
  s->Reset();
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
