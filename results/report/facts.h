#ifndef PTXBENCH_RESULTS_REPORT_FACTS_H_
#define PTXBENCH_RESULTS_REPORT_FACTS_H_

// What a report needs to know about one trajectory and its turns: a few
// numbers per turn, read from the database's columns (never from the large
// texts), so that a report over a million turns stays a scan. The scheduler
// fills these (scheduler/report_reader.cc); results/report/metrics.h turns them into
// a ptxbench.v1.GroupReport.

#include <cstdint>
#include <string>
#include <vector>

#include "ptxbench/v1/common.pb.h"

namespace ptxbench::report {

struct TurnFacts {
  int turn = 0;  // 0-based
  // The model's answer is in (the LLM step completed).
  bool answered = false;
  // A kernel was extracted from the answer.
  bool has_kernel = false;
  // An evaluation result is in; `status` is its status.
  bool evaluated = false;
  ptxbench::v1::EvalStatus status = ptxbench::v1::EVAL_STATUS_UNSPECIFIED;
  // The evaluation is correct (verdict::Correct, stored with the result).
  bool correct = false;
  // Correct on the workloads its model was shown (verdict::ShownPart;
  // `correct` when the trajectory holds none out).
  bool shown_correct = false;
  // A LIBRARY_FALLBACK whose outputs passed the checks (verdict::FallbackCorrect):
  // correct by the checks alone, not by what ran.
  bool fallback_correct = false;
  // Correct only: the kernel's speedup, the geometric mean over its workloads
  // of reference time / kernel time (verdict::KernelSpeedup). 0 otherwise.
  double speedup = 0;
  // Correct only: the mean roofline fraction over the workloads that have one
  // (verdict::RooflineFraction); 0 when unknown.
  double roofline = 0;
  // Correct only, for the scores (docs/REPORTS.md, "Scores"): the mean over
  // the workloads, each weighed by its importance, of the roofline fraction
  // (those that have one; 0 when none has) and of the SOL-Score (those that
  // have one; negative when none has). Computed when the result is stored
  // (verdict/scores.h).
  double weighted_roofline = 0;
  double sol_score = -1;
  // Wall time of the evaluation, milliseconds (evaluated only).
  int64_t eval_ms = 0;
  // The model call (answered only).
  ptxbench::v1::Usage usage;
  double cost_usd = 0;
  int64_t model_latency_ms = 0;
  // The model calls the answer took (an agent turn's may be many, or none).
  int model_calls = 1;
  // The answer or the evaluation came from a simulated executor.
  bool simulated = false;
  // The answer came from a scripted model (provider "scripted").
  bool scripted = false;
};

struct TrajectoryFacts {
  std::string experiment_id;
  std::string trajectory_id;
  std::string model;
  std::string tag;  // prompt variant (prompt_tag)
  std::string definition;
  // The definition's tags; a trajectory counts once in each.
  std::vector<std::string> categories;
  // The definition's importance (its weight in the scores); 1 by default.
  double importance = 1;
  int sample = 0;
  ptxbench::v1::TrajectoryState state = ptxbench::v1::TRAJECTORY_STATE_UNSPECIFIED;
  int num_turns = 0;  // the turn limit
  // Set by the trajectory row (a simulated executor touched it).
  bool simulated = false;
  // Some of its workloads are held out from its model (docs/FORMATS.md).
  bool held_out = false;
  // The turns that exist, in order (turn i at index i).
  std::vector<TurnFacts> turns;
  // Agent mode: the model calls of its session that no turn carries (those
  // after its last evaluation; all of them when it evaluated nothing).
  ptxbench::v1::Usage session_tail_usage;
  double session_tail_cost_usd = 0;
  int session_tail_calls = 0;
};

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_FACTS_H_
