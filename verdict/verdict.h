#ifndef PTXBENCH_VERDICT_VERDICT_H_
#define PTXBENCH_VERDICT_VERDICT_H_

// The verdict on one evaluation, decided in one place from its workload
// traces: whether it is correct, whether it met a target, its per-turn
// speedups and its roofline figure. The worker and the simulated evaluator
// summarize their traces here (Summarize); the scheduler, the reports, the
// exports, the CLI, the pipelines and the agent gateway read an
// EvalResult's verdict here, so a rule changes in one file and an
// evaluation cannot be correct in one room and wrong in another.
//
// The rules:
// - Correct: status PASSED, all_passed, at least one trace, every trace
//   PASSED. (A LIBRARY_FALLBACK is never correct; FallbackCorrect says
//   whether its checks passed.)
// - Target met: correct and the *minimum* speedup over the workloads
//   (EvalResult.min_speedup, written by Summarize) at least the target; the
//   geometric mean (KernelSpeedup) is the reports' figure, never the
//   target's.
// - Minimum speedup: the least positive, finite-or-infinite trace speedup;
//   0 unless every workload passed (a failed evaluation has none), and 0
//   when no workload was timed. A workload passed but not timed (speedup 0,
//   negative or NaN) is left out of the minimum.
// - Geometric mean (KernelSpeedup): over every trace; 0 when any trace was
//   not timed (speedup not positive, or not finite) or there is none.
// - Roofline: the mean roofline_fraction over the traces that have one.
// Pure functions of the message; no state, safe from any thread.

#include <set>
#include <string>

#include "ptxbench/v1/common.pb.h"

namespace ptxbench::verdict {

// Writes `result`'s status, all_passed and min_speedup from its traces: the
// status is the first trace's (in trace order) that is not PASSED, else
// PASSED (also with no trace: then all_passed is false); all_passed is
// status PASSED with at least one trace; min_speedup as above. The one
// summary of the real worker (worker/gpu_eval.cc) and the simulated one
// (worker/simulated_evaluator.cc).
void Summarize(ptxbench::v1::EvalResult& result);

// Whether the evaluation is correct (the rule above).
bool Correct(const ptxbench::v1::EvalResult& result);

// Whether `speedup`, a minimum speedup, reaches `target_speedup`: the
// comparison of target met, for a caller that keeps only the number (the
// scheduler's best_speedup of an agent trajectory's correct turns).
bool ReachesTarget(double speedup, double target_speedup);

// Correct and ReachesTarget(min_speedup, target_speedup).
bool TargetMet(const ptxbench::v1::EvalResult& result, double target_speedup);

// The minimum speedup of a correct evaluation; 0 otherwise, whatever the
// result's field says (a result written before the simulated evaluator
// summarized through here may carry one for a failed evaluation).
double MinSpeedup(const ptxbench::v1::EvalResult& result);

// The geometric mean over the traces of each trace's speedup (reference
// latency / kernel latency); 0 when a trace has no positive finite speedup
// (not timed) or there is none. Not gated on Correct: Judge does that.
double KernelSpeedup(const ptxbench::v1::EvalResult& result);

// The mean of the traces' roofline_fraction over those that have one (> 0
// and finite); 0 when none has.
double RooflineFraction(const ptxbench::v1::EvalResult& result);

// Whether an evaluation is a fallback that the checks alone would have
// passed (docs/REPORTS.md, "correct by checks"): its status is
// LIBRARY_FALLBACK, some trace is LIBRARY_FALLBACK with a census whose
// outputs were correct, and every trace is PASSED or such a fallback (no
// trace failed a check, crashed or was not run). A fallback found at the
// build (no traces) is not one: nothing ran.
bool FallbackCorrect(const ptxbench::v1::EvalResult& result);

// Everything a stored turn keeps of the verdict; the speedups and roofline
// only for a correct evaluation (0 otherwise).
struct Verdict {
  bool correct = false;
  bool fallback_correct = false;
  double min_speedup = 0;
  double kernel_speedup = 0;  // geometric mean
  double roofline = 0;
};
Verdict Judge(const ptxbench::v1::EvalResult& result);

// The part of `result` that a model may see when the workloads `held_out`
// are kept from it (docs/FORMATS.md, "Held-out workloads"): the traces of
// the other workloads only, summarized again (Summarize), and the memcheck
// gate's run and the profile only when they were of a shown workload. A
// result without traces (a build that failed, a compile-only evaluation)
// is returned as it is. Every reading of a model's turn (its feedback, the
// loop's target, an agent's reply) reads this part, so nothing of a
// held-out workload - its shape, status, speedup or log - reaches the model.
ptxbench::v1::EvalResult ShownPart(const ptxbench::v1::EvalResult& result,
                                   const std::set<std::string>& held_out);

}  // namespace ptxbench::verdict

#endif  // PTXBENCH_VERDICT_VERDICT_H_
