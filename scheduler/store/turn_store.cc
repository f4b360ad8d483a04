#include "scheduler/store/turn_store.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxbench::scheduler {

absl::Status TurnStore::InsertAnswer(const AnswerRow& r) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("INSERT INTO turns(trajectory, turn, state, answer_blob, reasoning_blob, "
                  "llm_meta, kernel_blob, kernel_sha256, feedback_blob, started_ms, "
                  "finished_ms, action_id, profile) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  const bool has_kernel = !r.kernel_blob.empty();
  s->BindInt64(1, r.trajectory).BindInt64(2, r.turn).BindText(3, has_kernel ? "eval" : "done");
  s->BindText(4, r.answer_blob);
  if (r.reasoning_blob.empty()) s->BindNull(5); else s->BindText(5, r.reasoning_blob);
  s->BindBlob(6, r.llm_meta);
  if (has_kernel) {
    s->BindText(7, r.kernel_blob).BindText(8, r.kernel_sha256).BindNull(9).BindNull(11);
  } else {
    s->BindNull(7).BindNull(8).BindText(9, r.feedback_blob).BindInt64(11, r.finished_ms);
  }
  s->BindInt64(10, r.started_ms);
  if (r.action_id.empty()) s->BindNull(12); else s->BindText(12, r.action_id);
  s->BindInt64(13, r.profile ? 1 : 0);
  return s->Run();
}

absl::Status TurnStore::RecordEval(int64_t trajectory, int turn, const EvalRow& row) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("UPDATE turns SET state = 'done', eval_blob = ?, eval_status = ?, "
                  "speedup = ?, kernel_speedup = ?, roofline = ?, eval_ms = ?, "
                  "feedback_blob = ?, finished_ms = ?, fallback_correct = ?, correct = ?, "
                  "weighted_roofline = ?, sol_score = ?, shown_correct = ? "
                  "WHERE trajectory = ? AND turn = ?"));
  s->BindText(1, row.eval_blob)
      .BindInt64(2, row.status)
      .BindDouble(3, row.min_speedup)
      .BindDouble(4, row.kernel_speedup)
      .BindDouble(5, row.roofline)
      .BindInt64(6, row.eval_ms)
      .BindText(7, row.feedback_blob)
      .BindInt64(8, row.finished_ms)
      .BindBool(9, row.fallback_correct)
      .BindBool(10, row.correct)
      .BindDouble(11, row.weighted_roofline)
      .BindDouble(12, row.sol_score)
      .BindBool(13, row.shown_correct)
      .BindInt64(14, trajectory)
      .BindInt64(15, turn);
  return s->Run();
}

absl::StatusOr<TurnKernel> TurnStore::Kernel(int64_t trajectory, int turn) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("SELECT kernel_blob, kernel_sha256, profile FROM turns "
                                    "WHERE trajectory = ? AND turn = ?"));
  s->BindInt64(1, trajectory).BindInt64(2, turn);
  PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) {
    return absl::InternalError(absl::StrCat("eval task without a turn: #", trajectory,
                                            " turn ", turn));
  }
  TurnKernel out{s->ColumnText(0), s->ColumnText(1), s->ColumnInt64(2) != 0};
  s->Reset();
  return out;
}

absl::StatusOr<std::optional<int>> TurnStore::FindAction(int64_t trajectory,
                                                         const std::string& action_id) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT turn FROM turns WHERE trajectory = ? AND action_id = ?"));
  s->BindInt64(1, trajectory).BindText(2, action_id);
  PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
  std::optional<int> turn;
  if (row) turn = static_cast<int>(s->ColumnInt64(0));
  s->Reset();
  return turn;
}

absl::StatusOr<int> TurnStore::Count(int64_t trajectory) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("SELECT count(*) FROM turns WHERE trajectory = ?"));
  s->BindInt64(1, trajectory);
  PTXB_RETURN_IF_ERROR(s->Step().status());
  const int n = static_cast<int>(s->ColumnInt64(0));
  s->Reset();
  return n;
}

absl::StatusOr<TurnEval> TurnStore::Eval(int64_t trajectory, int turn) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT ifnull(eval_blob, ''), ifnull(feedback_blob, '') FROM turns "
                  "WHERE trajectory = ? AND turn = ?"));
  s->BindInt64(1, trajectory).BindInt64(2, turn);
  PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) {
    return absl::InternalError(absl::StrCat("no turn ", turn, " in trajectory #", trajectory));
  }
  TurnEval out{s->ColumnText(0), s->ColumnText(1)};
  s->Reset();
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> TurnStore::History(
    int64_t trajectory, int first, int end) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT answer_blob, feedback_blob FROM turns WHERE trajectory = ? "
                  "AND turn >= ? AND turn < ? ORDER BY turn"));
  s->BindInt64(1, trajectory).BindInt64(2, first).BindInt64(3, end);
  std::vector<std::pair<std::string, std::string>> out;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out.emplace_back(s->ColumnText(0), s->ColumnText(1));
  }
  s->Reset();
  return out;
}

}  // namespace ptxbench::scheduler
