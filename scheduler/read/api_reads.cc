#include "scheduler/read/api_reads.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "scheduler/store/schema.h"
#include "storage/blob_store.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

absl::StatusOr<StoredExperiment> ReadExperiment(storage::Database& db, const std::string& id) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db.Cached("SELECT rowid, id, name, spec_json, created_ms, priority, eval_mode, "
                "language, context_policy, max_cost_usd, num_turns, cost_usd, architectures, "
                "lineage_json FROM experiments WHERE (id = ? OR name = ?) AND staged = 0"));
  s->BindText(1, id).BindText(2, id);
  PTXB_ASSIGN_OR_RETURN(bool found, s->Step());
  if (!found) return absl::NotFoundError(absl::StrCat("unknown experiment '", id, "'"));
  StoredExperiment out;
  v1::Experiment* e = &out.experiment;
  out.rowid = s->ColumnInt64(0);
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
  out.cost_usd = s->ColumnDouble(11);
  for (const std::string& a : DecodeArchitectures(s->ColumnText(12))) e->add_architectures(a);
  e->set_lineage_json(s->ColumnText(13));
  s->Reset();
  return out;
}

const char kTrajectorySummarySelect[] =
    "SELECT j.id, e.id, j.model, j.definition, j.prompt_tag, j.sample, j.num_turns, "
    "j.target_speedup, j.state, j.failure_class, j.reason, j.turns_completed, "
    "j.best_speedup, j.correct, j.cost_usd, j.updated_ms, j.rowid, j.system_blob, "
    "j.task_blob, j.workloads, j.agent_outcome FROM trajectories j "
    "JOIN experiments e ON e.rowid = j.experiment AND e.staged = 0 ";

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

absl::Status ReadTrajectoryHead(storage::Database& db, const storage::Statement& s,
                                v1::TurnDetail detail, v1::Trajectory* out,
                                const std::string* only_record) {
  *out->mutable_summary() = ReadSummary(s);
  if (detail != v1::TURN_DETAIL_RESULTS) {
    PTXB_ASSIGN_OR_RETURN(*out->mutable_system_prompt(), storage::GetBlob(db, s.ColumnText(17)));
    PTXB_ASSIGN_OR_RETURN(*out->mutable_task_prompt(), storage::GetBlob(db, s.ColumnText(18)));
  }
  if (!s.ColumnIsNull(20)) {
    if (!out->mutable_agent()->ParseFromString(s.ColumnBlob(20))) {
      return absl::DataLossError("an agent session's outcome in the database does not parse");
    }
    for (v1::AgentRecord& record : *out->mutable_agent()->mutable_records()) {
      if (detail == v1::TURN_DETAIL_RESULTS || record.blob().empty()) continue;
      if (only_record != nullptr && record.name() != *only_record) continue;
      PTXB_ASSIGN_OR_RETURN(*record.mutable_content(), storage::GetBlob(db, record.blob()));
    }
  }
  return absl::OkStatus();
}

namespace {

// Drops what TURN_DETAIL_RESULTS leaves out of an evaluation: the logs.
void StripLogs(v1::EvalResult* eval) {
  eval->clear_compile_log();
  for (v1::WorkloadTrace& trace : *eval->mutable_traces()) trace.clear_log();
}

}  // namespace

absl::Status ReadTurns(storage::Database& db, int64_t rowid, v1::TurnDetail detail,
                       const std::function<v1::Turn*()>& add,
                       const std::function<absl::Status(v1::Turn&)>& done) {
  const bool full = detail != v1::TURN_DETAIL_RESULTS;
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * t,
      db.Cached("SELECT turn, state, answer_blob, reasoning_blob, llm_meta, kernel_blob, "
                "kernel_sha256, eval_blob, feedback_blob, started_ms, finished_ms "
                "FROM turns WHERE trajectory = ? ORDER BY turn"));
  t->BindInt64(1, rowid);
  // The rows are read first and the blobs after, so that the blob lookups
  // (their own statements) never interleave with this one's steps.
  struct Row {
    int32_t index = 0;
    std::string state, answer, reasoning, meta, kernel, kernel_sha256, eval, feedback;
    int64_t started_ms = 0, finished_ms = 0;
  };
  std::vector<Row> rows;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, t->Step());
    if (!row) break;
    Row& r = rows.emplace_back();
    r.index = static_cast<int32_t>(t->ColumnInt64(0));
    r.state = t->ColumnText(1);
    r.meta = t->ColumnBlob(4);
    r.kernel_sha256 = t->ColumnText(6);
    r.eval = t->ColumnText(7);
    r.started_ms = t->ColumnInt64(9);
    r.finished_ms = t->ColumnIsNull(10) ? 0 : t->ColumnInt64(10);
    if (full) {  // the texts' hashes only when the texts are read
      r.answer = t->ColumnText(2);
      r.reasoning = t->ColumnText(3);
      r.kernel = t->ColumnText(5);
      r.feedback = t->ColumnText(8);
    }
  }
  t->Reset();
  for (const Row& row : rows) {
    v1::Turn& turn = *add();
    turn.set_index(row.index);
    turn.set_state(row.state);
    turn.mutable_response()->ParseFromString(row.meta);
    turn.set_kernel_sha256(row.kernel_sha256);
    turn.set_started_unix_ms(row.started_ms);
    turn.set_finished_unix_ms(row.finished_ms);
    if (!row.eval.empty()) {
      PTXB_ASSIGN_OR_RETURN(std::string eval, storage::GetBlob(db, row.eval));
      if (!turn.mutable_eval()->ParseFromString(eval)) {
        return absl::DataLossError("an evaluation result in the database does not parse");
      }
      if (!full) StripLogs(turn.mutable_eval());
      const v1::EvalResult& eval_read = turn.eval();
      if (detail == v1::TURN_DETAIL_FULL_WITH_REPORTS && eval_read.has_profile() &&
          !eval_read.profile().report_blob().empty()) {
        PTXB_ASSIGN_OR_RETURN(*turn.mutable_eval()->mutable_profile()->mutable_report(),
                              storage::GetBlob(db, eval_read.profile().report_blob()));
      }
    }
    if (full) {
      PTXB_ASSIGN_OR_RETURN(*turn.mutable_response()->mutable_text(),
                            storage::GetBlob(db, row.answer));
      if (!row.reasoning.empty()) {
        PTXB_ASSIGN_OR_RETURN(*turn.mutable_response()->mutable_reasoning(),
                              storage::GetBlob(db, row.reasoning));
      }
      if (!row.kernel.empty()) {
        PTXB_ASSIGN_OR_RETURN(*turn.mutable_kernel_source(), storage::GetBlob(db, row.kernel));
      }
      if (!row.feedback.empty()) {
        PTXB_ASSIGN_OR_RETURN(*turn.mutable_feedback(), storage::GetBlob(db, row.feedback));
      }
    }
    PTXB_RETURN_IF_ERROR(done(turn));
  }
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
