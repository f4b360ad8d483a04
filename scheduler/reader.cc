#include "scheduler/reader.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "scheduler/schema.h"
#include "scheduler/transitions.h"
#include "storage/blob_store.h"
#include "storage/event_log.h"

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

constexpr char kSummaryColumns[] =
    "j.id, e.id, j.model, j.definition, j.prompt_tag, j.sample, j.num_turns, "
    "j.target_speedup, j.state, j.failure_class, j.reason, j.turns_completed, "
    "j.best_speedup, j.correct, j.cost_usd, j.updated_ms, j.rowid, j.system_blob, "
    "j.task_blob, j.workloads FROM trajectories j JOIN experiments e ON e.rowid = j.experiment ";

v1::TrajectorySummary ReadSummary(const storage::Statement& s) {
  v1::TrajectorySummary t;
  t.set_trajectory_id(s.ColumnText(0));
  t.set_experiment_id(s.ColumnText(1));
  t.set_model(s.ColumnText(2));
  t.set_definition(s.ColumnText(3));
  t.set_prompt_tag(s.ColumnText(4));
  t.set_sample_index(static_cast<int32_t>(s.ColumnInt64(5)));
  t.set_num_turns(static_cast<int32_t>(s.ColumnInt64(6)));
  t.set_target_speedup(s.ColumnDouble(7));
  t.set_state(static_cast<v1::TrajectoryState>(s.ColumnInt64(8)));
  t.set_failure_class(static_cast<v1::FailureClass>(s.ColumnInt64(9)));
  t.set_reason(s.ColumnText(10));
  t.set_turns_completed(static_cast<int32_t>(s.ColumnInt64(11)));
  t.set_best_speedup(s.ColumnDouble(12));
  t.set_has_correct_kernel(s.ColumnInt64(13) != 0);
  t.set_cost_usd(s.ColumnDouble(14));
  t.set_updated_unix_ms(s.ColumnInt64(15));
  for (std::string& w : DecodeWorkloads(s.ColumnText(19))) t.add_workload_uuids(std::move(w));
  return t;
}

}  // namespace

absl::Status Reader::ProgressLocked(int64_t rowid, v1::ExperimentProgress* p) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT state, failure_class, count(*), sum(turns_completed), "
                  "sum(correct), max(simulated) FROM trajectories WHERE experiment = ? "
                  "GROUP BY state, failure_class"));
  s->BindInt64(1, rowid);
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    auto state = static_cast<v1::TrajectoryState>(s->ColumnInt64(0));
    auto klass = static_cast<v1::FailureClass>(s->ColumnInt64(1));
    const int64_t n = s->ColumnInt64(2);
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
      db_->Cached(absl::StrCat("SELECT state, count(*) FROM tasks WHERE experiment = ? AND ",
                               LiveTaskCondition("state"), " GROUP BY state")));
  t->BindInt64(1, rowid);
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, t->Step());
    if (!row) break;
    const auto state = static_cast<TaskState>(t->ColumnInt64(0));
    if (state == TaskState::kQueued) p->set_tasks_queued(t->ColumnInt64(1));
    if (state == TaskState::kLeased) p->set_tasks_leased(t->ColumnInt64(1));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::GetExperimentResponse> Reader::ExperimentLocked(const std::string& id) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT rowid, id, name, spec_json, created_ms, priority, eval_mode, "
                  "language, context_policy, max_cost_usd, num_turns, cost_usd "
                  "FROM experiments WHERE id = ? OR name = ?"));
  s->BindText(1, id).BindText(2, id);
  PTXB_ASSIGN_OR_RETURN(bool found, s->Step());
  if (!found) return absl::NotFoundError(absl::StrCat("unknown experiment '", id, "'"));
  v1::GetExperimentResponse out;
  v1::Experiment* e = out.mutable_experiment();
  const int64_t rowid = s->ColumnInt64(0);
  e->set_experiment_id(s->ColumnText(1));
  e->set_name(s->ColumnText(2));
  e->set_spec_json(s->ColumnText(3));
  e->set_created_unix_ms(s->ColumnInt64(4));
  e->set_priority(static_cast<int32_t>(s->ColumnInt64(5)));
  e->set_eval_mode(static_cast<v1::EvalMode>(s->ColumnInt64(6)));
  e->set_language(s->ColumnText(7));
  e->set_context_policy(s->ColumnText(8));
  e->set_max_cost_usd(s->ColumnDouble(9));
  e->set_num_turns(static_cast<int32_t>(s->ColumnInt64(10)));
  out.mutable_progress()->set_cost_usd(s->ColumnDouble(11));
  s->Reset();
  PTXB_RETURN_IF_ERROR(ProgressLocked(rowid, out.mutable_progress()));
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
                        db_->Cached("SELECT id FROM experiments ORDER BY rowid DESC"));
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
      db_->Cached(absl::StrCat("SELECT ", kSummaryColumns,
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

absl::StatusOr<v1::Trajectory> Reader::GetTrajectory(const std::string& id) {
  absl::MutexLock lock(&mu_);
  ReadTransaction snapshot(db_.get());
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached(absl::StrCat("SELECT ", kSummaryColumns, "WHERE j.id = ?")));
  s->BindText(1, id);
  PTXB_ASSIGN_OR_RETURN(bool found, s->Step());
  if (!found) return absl::NotFoundError(absl::StrCat("unknown trajectory '", id, "'"));
  v1::Trajectory out;
  *out.mutable_summary() = ReadSummary(*s);
  const int64_t rowid = s->ColumnInt64(16);
  const std::string system_blob = s->ColumnText(17), task_blob = s->ColumnText(18);
  s->Reset();
  PTXB_ASSIGN_OR_RETURN(*out.mutable_system_prompt(), storage::GetBlob(*db_, system_blob));
  PTXB_ASSIGN_OR_RETURN(*out.mutable_task_prompt(), storage::GetBlob(*db_, task_blob));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * t,
      db_->Cached("SELECT turn, state, answer_blob, reasoning_blob, llm_meta, kernel_blob, "
                  "kernel_sha256, eval_blob, feedback_blob, started_ms, finished_ms "
                  "FROM turns WHERE trajectory = ? ORDER BY turn"));
  t->BindInt64(1, rowid);
  struct Blobs { std::string answer, reasoning, kernel, eval, feedback; };
  std::vector<std::pair<v1::Turn, Blobs>> turns;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, t->Step());
    if (!row) break;
    v1::Turn turn;
    turn.set_index(static_cast<int32_t>(t->ColumnInt64(0)));
    turn.set_state(t->ColumnText(1));
    turn.mutable_response()->ParseFromString(t->ColumnBlob(4));
    turn.set_kernel_sha256(t->ColumnText(6));
    turn.set_started_unix_ms(t->ColumnInt64(9));
    turn.set_finished_unix_ms(t->ColumnIsNull(10) ? 0 : t->ColumnInt64(10));
    turns.emplace_back(std::move(turn), Blobs{t->ColumnText(2), t->ColumnText(3), t->ColumnText(5),
                                              t->ColumnText(7), t->ColumnText(8)});
  }
  for (auto& [turn, blobs] : turns) {
    PTXB_ASSIGN_OR_RETURN(*turn.mutable_response()->mutable_text(),
                          storage::GetBlob(*db_, blobs.answer));
    if (!blobs.reasoning.empty()) {
      PTXB_ASSIGN_OR_RETURN(*turn.mutable_response()->mutable_reasoning(),
                            storage::GetBlob(*db_, blobs.reasoning));
    }
    if (!blobs.kernel.empty()) {
      PTXB_ASSIGN_OR_RETURN(*turn.mutable_kernel_source(), storage::GetBlob(*db_, blobs.kernel));
    }
    if (!blobs.eval.empty()) {
      PTXB_ASSIGN_OR_RETURN(std::string eval, storage::GetBlob(*db_, blobs.eval));
      turn.mutable_eval()->ParseFromString(eval);
    }
    if (!blobs.feedback.empty()) {
      PTXB_ASSIGN_OR_RETURN(*turn.mutable_feedback(), storage::GetBlob(*db_, blobs.feedback));
    }
    *out.add_turns() = std::move(turn);
  }
  return out;
}

absl::StatusOr<std::vector<v1::Event>> Reader::Events(const std::string& experiment_id,
                                                      int64_t after_id, int limit) {
  absl::MutexLock lock(&mu_);
  PTXB_ASSIGN_OR_RETURN(std::vector<storage::EventRecord> records,
                        storage::ReadEvents(*db_, experiment_id, after_id, limit));
  std::vector<v1::Event> out;
  for (const storage::EventRecord& r : records) {
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
  return storage::LastEventId(*db_, experiment_id);
}

}  // namespace ptxbench::scheduler
