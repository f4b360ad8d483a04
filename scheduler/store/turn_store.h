#ifndef PTXBENCH_SCHEDULER_STORE_TURN_STORE_H_
#define PTXBENCH_SCHEDULER_STORE_TURN_STORE_H_

// The turns table, as Core writes it: one row per model answer, completed by
// its evaluation. Texts live in blobs; rows hold their hashes. Internal to
// the scheduler.
//
// Threading: as Core (the writer thread, or one test thread).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ptxbench/v1/common.pb.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

// A model's answer to one turn, by blob hash.
struct AnswerRow {
  int64_t trajectory = 0;
  int turn = 0;
  std::string answer_blob;
  std::string reasoning_blob;  // "" when the model gave none
  std::string llm_meta;        // a serialized LlmResponse without its texts
  // With a kernel the turn waits for its evaluation; without, it is done and
  // its feedback says so.
  std::string kernel_blob, kernel_sha256;
  std::string feedback_blob;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  // Agent mode: the evaluate call that made the turn; "" for model answers.
  std::string action_id;
  // Agent mode: the call was profile_kernel (the evaluation is profiled).
  bool profile = false;
};

// What an eval task of a turn evaluates.
struct TurnKernel {
  std::string blob, sha256;
  bool profile = false;  // the agent asked for a profile (AnswerRow::profile)
};

// A turn's evaluation as an agent session waits for it: unset hashes while
// it runs.
struct TurnEval {
  std::string eval_blob;
  std::string feedback_blob;
};

// An evaluation's result, by blob hash, and the numbers reports read.
struct EvalRow {
  std::string eval_blob;
  ptxbench::v1::EvalStatus status = ptxbench::v1::EVAL_STATUS_UNSPECIFIED;
  // verdict::Correct of the result: what the reports count as correct.
  bool correct = false;
  // verdict::Correct of the part its model was shown (verdict::ShownPart;
  // `correct` when no workload is held out).
  bool shown_correct = false;
  // Correct kernels only (0 otherwise): the minimum speedup over the
  // workloads (the target's measure) and the geometric mean (the reports').
  double min_speedup = 0;
  double kernel_speedup = 0;
  double roofline = 0;
  // verdict::WeightedScores of the result (correct only; 0 and -1 otherwise).
  double weighted_roofline = 0;
  double sol_score = -1;
  // verdict::FallbackCorrect of the result.
  bool fallback_correct = false;
  int64_t eval_ms = 0;
  std::string feedback_blob;
  int64_t finished_ms = 0;
};

class TurnStore {
 public:
  explicit TurnStore(storage::Database* db) : db_(db) {}

  absl::Status InsertAnswer(const AnswerRow& row);
  // Completes a turn with its evaluation.
  absl::Status RecordEval(int64_t trajectory, int turn, const EvalRow& row);
  // The kernel of a turn. INTERNAL when the turn has none.
  absl::StatusOr<TurnKernel> Kernel(int64_t trajectory, int turn);
  // Agent mode: the turn an evaluate call made, by its action id.
  absl::StatusOr<std::optional<int>> FindAction(int64_t trajectory, const std::string& action_id);
  // How many turns the trajectory has (evaluated or not).
  absl::StatusOr<int> Count(int64_t trajectory);
  // The evaluation of a turn, by blob hash (empty while it runs). INTERNAL
  // for a turn that does not exist.
  absl::StatusOr<TurnEval> Eval(int64_t trajectory, int turn);
  // {answer, feedback} blob hashes of turns [first, end), in order.
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> History(int64_t trajectory,
                                                                           int first, int end);

 private:
  storage::Database* db_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_TURN_STORE_H_
