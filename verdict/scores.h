#ifndef PTXBENCH_VERDICT_SCORES_H_
#define PTXBENCH_VERDICT_SCORES_H_

// The per-evaluation figures of the reports' scores (docs/REPORTS.md,
// "Scores"), decided here once, when a result is stored, so that a report
// reads two columns per turn and never a trace:
// - a workload's SOL-Score, SOL-ExecBench's 1 / (1 + (T_k - T_SOL) /
//   (T_b - T_SOL)) with T_k the kernel's time, T_b the reference's and
//   T_SOL the roofline time (speed of light) of the workload;
// - an evaluation's weighted roofline fraction and SOL-Score: the means over
//   its workloads, each weighed by the workload's importance.
// Pure functions of their arguments; safe from any thread.

#include <functional>
#include <optional>
#include <string>

#include "ptxbench/v1/common.pb.h"

namespace ptxbench::verdict {

// The SOL-Score of one workload from its trace's speedup s = T_b / T_k and
// roofline fraction r = T_SOL / T_k, which give T_k, T_b and T_SOL up to
// the one scale the score does not depend on: (s - r) / (s + 1 - 2r).
// - nullopt when s or r is not positive and finite (not timed, or no
//   roofline known): there is no speed of light to measure against;
// - nullopt when r >= s (T_SOL >= T_b): the reference is at or past the
//   roofline, so the distance between them, the score's scale, is not
//   positive (the roofline model does not hold for this workload);
// - 1 when r >= 1 (the kernel at or past speed of light, by the model).
// Otherwise in (0, 1): 1/2 at the reference's time, 1 at speed of light.
std::optional<double> WorkloadSolScore(double speedup, double roofline_fraction);

struct Scores {
  // The importance-weighted mean roofline fraction over the traces that
  // have one (> 0 and finite); 0 when none has.
  double weighted_roofline = 0;
  // The importance-weighted mean WorkloadSolScore over the traces that have
  // one; negative (unknown) when none has.
  double sol_score = -1;
};

// A workload's importance by its uuid (a non-negative weight; 1 when the
// workload does not say).
using WorkloadImportance = std::function<double(const std::string& workload_uuid)>;

// The scores of a correct evaluation (Correct); zero and unknown for any
// other, as the speedups are. `importance` may be empty: every workload
// weighs 1. A weight that is negative or not finite counts as 0; when every
// weight of the traces that have a figure is 0, the figure is unknown.
Scores WeightedScores(const ptxbench::v1::EvalResult& result, const WorkloadImportance& importance);

}  // namespace ptxbench::verdict

#endif  // PTXBENCH_VERDICT_SCORES_H_
