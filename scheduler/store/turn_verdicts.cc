#include "scheduler/store/turn_verdicts.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ptxbench/v1/common.pb.h"
#include "storage/blob_store.h"
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

}  // namespace

absl::Status StoreVerdictsOfEvaluatedTurns(storage::Database& db) {
  // Read first, then written: the updates do not run under a live scan of
  // the same table.
  std::vector<StoredTurn> turns;
  {
    PTXB_ASSIGN_OR_RETURN(
        storage::Statement s,
        db.Prepare("SELECT trajectory, turn, eval_blob, eval_ms IS NULL FROM turns "
                   "WHERE eval_blob IS NOT NULL AND (eval_ms IS NULL OR eval_status = ?)"));
    s.BindInt64(1, v1::PASSED);
    while (true) {
      PTXB_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      turns.push_back({s.ColumnInt64(0), s.ColumnInt64(1), s.ColumnText(2), s.ColumnInt64(3) != 0});
    }
  }
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
    PTXB_ASSIGN_OR_RETURN(std::string bytes, storage::GetBlob(db, t.eval_blob));
    if (!result.ParseFromString(bytes)) {
      return absl::DataLossError(absl::StrCat("the evaluation result of trajectory #", t.trajectory,
                                              " turn ", t.turn, " does not parse"));
    }
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

}  // namespace ptxbench::scheduler
