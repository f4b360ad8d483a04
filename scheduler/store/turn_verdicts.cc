#include "scheduler/store/turn_verdicts.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ptxbench/v1/common.pb.h"
#include "storage/blob_store.h"
#include "verdict/scores.h"
#include "verdict/verdict.h"

namespace ptxbench::scheduler {
namespace {

namespace v1 = ::ptxbench::v1;

struct StoredTurn {
  int64_t trajectory = 0;
  int64_t turn = 0;
  std::string eval_blob;
  bool before_v3 = false;  // no report columns
};

// The turns `query` selects, its columns trajectory, turn, eval_blob and,
// `with_before_v3`, whether the turn predates version 3; read before any is
// written, so that the updates do not run under a live scan of the table.
absl::StatusOr<std::vector<StoredTurn>> ReadTurns(storage::Statement& query, bool with_before_v3) {
  std::vector<StoredTurn> turns;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    turns.push_back({query.ColumnInt64(0), query.ColumnInt64(1), query.ColumnText(2),
                     with_before_v3 && query.ColumnInt64(3) != 0});
  }
  return turns;
}

// The stored result of `t` into `result`; kDataLoss, naming the turn, when
// it does not parse.
absl::Status ReadResult(storage::Database& db, const StoredTurn& t, v1::EvalResult& result) {
  PTXB_ASSIGN_OR_RETURN(std::string bytes, storage::GetBlob(db, t.eval_blob));
  if (!result.ParseFromString(bytes)) {
    return absl::DataLossError(absl::StrCat("the evaluation result of trajectory #", t.trajectory,
                                            " turn ", t.turn, " does not parse"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status StoreVerdictsOfEvaluatedTurns(storage::Database& db) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement select,
      db.Prepare("SELECT trajectory, turn, eval_blob, eval_ms IS NULL FROM turns "
                 "WHERE eval_blob IS NOT NULL AND (eval_ms IS NULL OR eval_status = ?)"));
  select.BindInt64(1, v1::PASSED);
  PTXB_ASSIGN_OR_RETURN(const std::vector<StoredTurn> turns,
                        ReadTurns(select, /*with_before_v3=*/true));
  PTXB_ASSIGN_OR_RETURN(storage::Statement correct,
                        db.Prepare("UPDATE turns SET correct = ? WHERE trajectory = ? AND turn = ?"));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement columns,
      db.Prepare("UPDATE turns SET correct = ?, kernel_speedup = ?, roofline = ?, "
                 "fallback_correct = ?, eval_ms = ? WHERE trajectory = ? AND turn = ?"));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement simulated,
      db.Prepare("UPDATE trajectories SET simulated = 1 WHERE rowid = ? AND simulated = 0"));
  v1::EvalResult result;
  for (const StoredTurn& t : turns) {
    PTXB_RETURN_IF_ERROR(ReadResult(db, t, result));
    const verdict::Verdict verdict = verdict::Judge(result);
    if (!t.before_v3) {
      correct.BindBool(1, verdict.correct).BindInt64(2, t.trajectory).BindInt64(3, t.turn);
      PTXB_RETURN_IF_ERROR(correct.Run());
      continue;
    }
    columns.BindBool(1, verdict.correct)
        .BindDouble(2, verdict.kernel_speedup)
        .BindDouble(3, verdict.roofline)
        .BindBool(4, verdict.fallback_correct)
        .BindInt64(5, result.wall_time_ms())
        .BindInt64(6, t.trajectory)
        .BindInt64(7, t.turn);
    PTXB_RETURN_IF_ERROR(columns.Run());
    if (result.simulated()) {
      simulated.BindInt64(1, t.trajectory);
      PTXB_RETURN_IF_ERROR(simulated.Run());
    }
  }
  return absl::OkStatus();
}

absl::Status StoreScoresOfCorrectTurns(storage::Database& db) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement select,
                        db.Prepare("SELECT trajectory, turn, eval_blob FROM turns "
                                   "WHERE eval_blob IS NOT NULL AND correct = 1"));
  PTXB_ASSIGN_OR_RETURN(const std::vector<StoredTurn> turns,
                        ReadTurns(select, /*with_before_v3=*/false));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement update,
      db.Prepare("UPDATE turns SET weighted_roofline = ?, sol_score = ? "
                 "WHERE trajectory = ? AND turn = ?"));
  v1::EvalResult result;
  for (const StoredTurn& t : turns) {
    PTXB_RETURN_IF_ERROR(ReadResult(db, t, result));
    const verdict::Scores scores = verdict::WeightedScores(result, nullptr);
    update.BindDouble(1, scores.weighted_roofline)
        .BindDouble(2, scores.sol_score)
        .BindInt64(3, t.trajectory)
        .BindInt64(4, t.turn);
    PTXB_RETURN_IF_ERROR(update.Run());
  }
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
