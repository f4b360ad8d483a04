#include "scheduler/store/trajectory_store.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "scheduler/store/schema.h"

namespace ptxbench::scheduler {

using experiment_spec::TrajectorySpec;

namespace v1 = ::ptxbench::v1;

namespace {

constexpr char kTrajectoryColumns[] =
    "j.rowid, j.id, j.experiment, e.id, j.model, j.definition, j.prompt_tag, "
    "j.num_turns, j.target_speedup, j.state, j.failure_class, j.reason, "
    "j.turns_completed, j.best_speedup, j.correct, j.simulated, j.cost_usd, "
    "j.system_blob, j.task_blob, j.workloads, j.starter_blob, j.held_out FROM trajectories j "
    "JOIN experiments e ON "
    "e.rowid = j.experiment ";

absl::StatusOr<TrajectoryRow> ReadOne(storage::Statement* s, const std::string& what) {
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
  t.starter_blob = s->ColumnText(20);
  t.held_out = DecodeWorkloads(s->ColumnText(21));
  s->Reset();
  return t;
}

}  // namespace

absl::StatusOr<TrajectoryRow> TrajectoryStore::Read(int64_t rowid) {
  // Built once: every lease and report reads its trajectory.
  static const std::string* const kSql =
      new std::string(absl::StrCat("SELECT ", kTrajectoryColumns, "WHERE j.rowid = ?"));
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s, db_->Cached(*kSql));
  s->BindInt64(1, rowid);
  return ReadOne(s, absl::StrCat("#", rowid));
}

absl::StatusOr<TrajectoryRow> TrajectoryStore::ReadById(const std::string& id) {
  static const std::string* const kSql =
      // A trajectory of an experiment still being submitted is unknown.
      new std::string(
          absl::StrCat("SELECT ", kTrajectoryColumns, "WHERE j.id = ? AND e.staged = 0"));
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s, db_->Cached(*kSql));
  s->BindText(1, id);
  return ReadOne(s, id);
}

absl::StatusOr<int64_t> TrajectoryStore::Insert(const TrajectorySpec& t, int64_t experiment,
                                                const std::string& system_blob,
                                                const std::string& task_blob,
                                                v1::TrajectoryState state, int64_t now_ms,
                                                const std::string& starter_blob) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("INSERT INTO trajectories(id, experiment, model, definition, "
                  "prompt_tag, sample, num_turns, target_speedup, state, system_blob, "
                  "task_blob, updated_ms, workloads, starter_blob, held_out) "
                  "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  s->BindText(1, t.trajectory_id)
      .BindInt64(2, experiment)
      .BindText(3, t.model)
      .BindText(4, t.definition)
      .BindText(5, t.prompt_tag)
      .BindInt64(6, t.sample_index)
      .BindInt64(7, t.num_turns)
      .BindDouble(8, t.target_speedup)
      .BindInt64(9, state)
      .BindText(10, system_blob)
      .BindText(11, task_blob)
      .BindInt64(12, now_ms)
      .BindText(13, EncodeWorkloads(t.workloads))
      .BindText(14, starter_blob)
      .BindText(15, EncodeWorkloads(t.held_out));
  PTXB_RETURN_IF_ERROR(s->Run());
  return db_->LastInsertRowId();
}

absl::StatusOr<const TrajectoryTransition*> TrajectoryStore::Transit(TrajectoryRow& t,
                                                                     TrajectoryEvent event,
                                                                     int64_t now_ms) {
  PTXB_ASSIGN_OR_RETURN(const TrajectoryTransition* transition,
                        FindTrajectoryTransition(t.state, event));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("UPDATE trajectories SET state = ?, failure_class = ?, reason = ?, "
                  "turns_completed = ?, best_speedup = ?, correct = ?, simulated = ?, "
                  "cost_usd = ?, num_turns = ?, updated_ms = ? WHERE rowid = ?"));
  s->BindInt64(1, transition->to)
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
  PTXB_RETURN_IF_ERROR(s->Run());
  t.state = transition->to;
  return transition;
}

absl::StatusOr<std::vector<int64_t>> TrajectoryStore::InState(int64_t experiment,
                                                              v1::TrajectoryState state,
                                                              int64_t after, int64_t limit,
                                                              int64_t up_to) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT rowid FROM trajectories WHERE experiment = ? AND state = ? "
                  "AND rowid > ? AND rowid <= ? ORDER BY rowid LIMIT ?"));
  s->BindInt64(1, experiment).BindInt64(2, state).BindInt64(3, after).BindInt64(4, up_to)
      .BindInt64(5, limit);
  return ReadInt64Column(s);
}

absl::Status TrajectoryStore::SetAgentOutcome(int64_t rowid, const std::string& outcome) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("UPDATE trajectories SET agent_outcome = ? WHERE rowid = ?"));
  s->BindBlob(1, outcome).BindInt64(2, rowid);
  return s->Run();
}

absl::StatusOr<int64_t> TrajectoryStore::RaiseNumTurns(int64_t experiment, int num_turns,
                                                       int64_t after, int64_t limit) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * last,
      db_->Cached("SELECT ifnull(max(rowid), 0) FROM (SELECT rowid FROM trajectories "
                  "WHERE experiment = ? AND rowid > ? ORDER BY rowid LIMIT ?)"));
  last->BindInt64(1, experiment).BindInt64(2, after).BindInt64(3, limit);
  PTXB_ASSIGN_OR_RETURN(std::vector<int64_t> rows, ReadInt64Column(last));
  const int64_t up_to = rows.empty() ? 0 : rows[0];
  if (up_to == 0) return 0;
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("UPDATE trajectories SET num_turns = ? WHERE experiment = ? AND rowid > ? "
                  "AND rowid <= ? AND num_turns < ?"));
  s->BindInt64(1, num_turns).BindInt64(2, experiment).BindInt64(3, after).BindInt64(4, up_to)
      .BindInt64(5, num_turns);
  PTXB_RETURN_IF_ERROR(s->Run());
  return up_to;
}

}  // namespace ptxbench::scheduler
