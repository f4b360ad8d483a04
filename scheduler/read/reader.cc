#include "scheduler/read/reader.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "scheduler/read/api_reads.h"
#include "scheduler/store/event_log.h"
#include "scheduler/store/schema.h"
#include "scheduler/store/transitions.h"
#include "storage/blob_store.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {

// Statements over one connection must not keep a read snapshot open between
// calls: each query below runs inside one explicit read transaction so its
// counts come from a single consistent snapshot.
class ReadTransaction {
 public:
  explicit ReadTransaction(storage::Database* db) : db_(db) { ok_ = db_->Execute("BEGIN").ok(); }
  ~ReadTransaction() {
    if (ok_) db_->Execute("COMMIT").IgnoreError();
  }

 private:
  storage::Database* db_;
  bool ok_ = false;
};

}  // namespace

absl::Status Reader::ProgressLocked(int64_t rowid, v1::ExperimentProgress* p) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT state, failure_class, trajectories, turns_completed, correct, "
                  "simulated FROM trajectory_counts WHERE experiment = ?"));
  s->BindInt64(1, rowid);
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    auto state = static_cast<v1::TrajectoryState>(s->ColumnInt64(0));
    auto klass = static_cast<v1::FailureClass>(s->ColumnInt64(1));
    const int64_t n = s->ColumnInt64(2);
    if (n == 0) continue;  // a counter that went back to zero
    p->set_total(p->total() + n);
    if (IsTerminal(state)) p->set_terminal(p->terminal() + n);
    (*p->mutable_by_state())[v1::TrajectoryState_Name(state)] += n;
    if (state == v1::FAILED) (*p->mutable_by_failure_class())[v1::FailureClass_Name(klass)] += n;
    if (state == v1::SUBMITTED) p->set_target_met(p->target_met() + n);
    p->set_turns_completed(p->turns_completed() + s->ColumnInt64(3));
    p->set_correct(p->correct() + s->ColumnInt64(4));
    if (s->ColumnInt64(5) != 0) p->set_simulated(true);
  }
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * t,
      db_->Cached(absl::StrCat("SELECT state, kind, tasks FROM task_counts WHERE experiment = ? AND ",
                               LiveTaskCondition("state"))));
  t->BindInt64(1, rowid);
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, t->Step());
    if (!row) break;
    const auto state = static_cast<TaskState>(t->ColumnInt64(0));
    const auto kind = static_cast<StepKind>(t->ColumnInt64(1));
    const int64_t n = t->ColumnInt64(2);
    if (n == 0) continue;
    if (state == TaskState::kQueued) p->set_tasks_queued(p->tasks_queued() + n);
    if (state == TaskState::kQueued && kind == StepKind::kEval) p->set_eval_tasks_queued(n);
    if (state == TaskState::kLeased) p->set_tasks_leased(p->tasks_leased() + n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, int64_t>> Reader::TrajectoriesByState() {
  absl::MutexLock lock(&mu_);
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("SELECT state, sum(trajectories) FROM trajectory_counts "
                                    "WHERE experiment IN (SELECT rowid FROM experiments "
                                    "WHERE staged = 0) GROUP BY state"));
  std::map<std::string, int64_t> out;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out[v1::TrajectoryState_Name(static_cast<v1::TrajectoryState>(s->ColumnInt64(0)))] =
        s->ColumnInt64(1);
  }
  return out;
}

absl::StatusOr<v1::GetExperimentResponse> Reader::ExperimentLocked(const std::string& id) {
  PTXB_ASSIGN_OR_RETURN(StoredExperiment row, ReadExperiment(*db_, id));
  v1::GetExperimentResponse out;
  *out.mutable_experiment() = std::move(row.experiment);
  out.mutable_progress()->set_cost_usd(row.cost_usd);
  PTXB_RETURN_IF_ERROR(ProgressLocked(row.rowid, out.mutable_progress()));
  return out;
}

absl::StatusOr<v1::GetExperimentResponse> Reader::GetExperiment(const std::string& id) {
  absl::MutexLock lock(&mu_);
  ReadTransaction snapshot(db_.get());
  return ExperimentLocked(id);
}

absl::StatusOr<v1::ListExperimentsResponse> Reader::ListExperiments() {
  absl::MutexLock lock(&mu_);
  ReadTransaction snapshot(db_.get());
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("SELECT id FROM experiments WHERE staged = 0 ORDER BY rowid DESC"));
  std::vector<std::string> ids;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    ids.push_back(s->ColumnText(0));
  }
  v1::ListExperimentsResponse out;
  for (const std::string& id : ids) {
    PTXB_ASSIGN_OR_RETURN(*out.add_experiments(), ExperimentLocked(id));
  }
  return out;
}

absl::StatusOr<v1::ListTrajectoriesResponse> Reader::ListTrajectories(
    const v1::ListTrajectoriesRequest& request) {
  absl::MutexLock lock(&mu_);
  ReadTransaction snapshot(db_.get());
  PTXB_ASSIGN_OR_RETURN(v1::GetExperimentResponse exp, ExperimentLocked(request.experiment_id()));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached(absl::StrCat(kTrajectorySummarySelect,
                               "WHERE e.id = ? AND (? = 0 OR j.state = ?) "
                               "ORDER BY j.rowid LIMIT ? OFFSET ?")));
  const int limit = request.limit() > 0 ? request.limit() : 1000;
  s->BindText(1, exp.experiment().experiment_id())
      .BindInt64(2, request.state())
      .BindInt64(3, request.state())
      .BindInt64(4, limit)
      .BindInt64(5, request.offset());
  v1::ListTrajectoriesResponse out;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    *out.add_trajectories() = ReadSummary(*s);
  }
  out.set_total(request.state() == v1::TRAJECTORY_STATE_UNSPECIFIED
                    ? exp.progress().total()
                    : exp.progress().by_state().count(v1::TrajectoryState_Name(request.state()))
                          ? exp.progress().by_state().at(v1::TrajectoryState_Name(request.state()))
                          : 0);
  return out;
}

absl::StatusOr<v1::Trajectory> Reader::GetTrajectory(const std::string& id,
                                                     const std::string& agent_record) {
  absl::MutexLock lock(&mu_);
  ReadTransaction snapshot(db_.get());
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached(absl::StrCat(kTrajectorySummarySelect, "WHERE j.id = ?")));
  s->BindText(1, id);
  PTXB_ASSIGN_OR_RETURN(bool found, s->Step());
  if (!found) return absl::NotFoundError(absl::StrCat("unknown trajectory '", id, "'"));
  const int64_t rowid = s->ColumnInt64(16);
  v1::Trajectory out;
  absl::Status head = ReadTrajectoryHead(*db_, *s, v1::TURN_DETAIL_FULL, &out, &agent_record);
  s->Reset();
  PTXB_RETURN_IF_ERROR(head);
  PTXB_RETURN_IF_ERROR(ReadTurns(
      *db_, rowid, v1::TURN_DETAIL_FULL, [&] { return out.add_turns(); },
      [](v1::Turn&) { return absl::OkStatus(); }));
  return out;
}

absl::StatusOr<std::vector<v1::Event>> Reader::Events(const std::string& experiment_id,
                                                      int64_t after_id, int limit) {
  absl::MutexLock lock(&mu_);
  PTXB_ASSIGN_OR_RETURN(std::vector<EventRecord> records,
                        ReadEvents(*db_, experiment_id, after_id, limit));
  std::vector<v1::Event> out;
  for (const EventRecord& r : records) {
    v1::Event e;
    e.set_event_id(r.id);
    e.set_unix_ms(r.unix_ms);
    e.set_experiment_id(r.experiment);
    e.set_trajectory_id(r.trajectory);
    e.set_turn(r.turn);
    e.set_kind(r.kind);
    e.set_detail(r.detail);
    out.push_back(std::move(e));
  }
  return out;
}

absl::StatusOr<int64_t> Reader::LastEventId(const std::string& experiment_id) {
  absl::MutexLock lock(&mu_);
  return ::ptxbench::scheduler::LastEventId(*db_, experiment_id);
}

}  // namespace ptxbench::scheduler
