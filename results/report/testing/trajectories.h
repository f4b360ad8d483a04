#ifndef PTXBENCH_RESULTS_REPORT_TESTING_TRAJECTORIES_H_
#define PTXBENCH_RESULTS_REPORT_TESTING_TRAJECTORIES_H_

// Trajectory facts with known outcomes, for the tests of report/: turns
// built by kind, the four trajectories whose metrics results/report/metrics_test.cc
// works out by hand, and their report.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "results/report/facts.h"
#include "results/report/metrics.h"

namespace ptxbench::report::fixtures {

// Every answered turn costs $0.01 and 1000/100/10/1 tokens, so sums are
// counts of answered turns.
inline TurnFacts Answer(int64_t latency_ms) {
  TurnFacts turn;
  turn.answered = true;
  turn.usage.set_input_tokens(1000);
  turn.usage.set_output_tokens(100);
  turn.usage.set_reasoning_tokens(10);
  turn.usage.set_cached_tokens(1);
  turn.cost_usd = 0.01;
  turn.model_latency_ms = latency_ms;
  return turn;
}

// Answered with a kernel that is waiting for its evaluation.
inline TurnFacts Pending(int64_t latency_ms) {
  TurnFacts turn = Answer(latency_ms);
  turn.has_kernel = true;
  return turn;
}

inline TurnFacts Evaluated(int64_t latency_ms, v1::EvalStatus status, int64_t eval_ms) {
  TurnFacts turn = Pending(latency_ms);
  turn.evaluated = true;
  turn.status = status;
  turn.eval_ms = eval_ms;
  return turn;
}

inline TurnFacts Passed(int64_t latency_ms, int64_t eval_ms, double speedup, double roofline = 0) {
  TurnFacts turn = Evaluated(latency_ms, v1::PASSED, eval_ms);
  turn.correct = true;
  turn.shown_correct = true;
  turn.speedup = speedup;
  turn.roofline = roofline;
  return turn;
}

inline TrajectoryFacts Trajectory(std::string model, std::string tag,
                                  std::vector<std::string> categories, v1::TrajectoryState state,
                                  std::vector<TurnFacts> turns) {
  TrajectoryFacts trajectory;
  trajectory.model = std::move(model);
  trajectory.tag = std::move(tag);
  trajectory.definition = categories.empty() ? "softmax" : categories.front();
  trajectory.categories = std::move(categories);
  trajectory.state = state;
  trajectory.num_turns = 3;
  for (size_t i = 0; i < turns.size(); ++i) turns[i].turn = static_cast<int>(i);
  trajectory.turns = std::move(turns);
  return trajectory;
}

// The four trajectories of results/report/metrics_test.cc (num_turns 3 each):
//   A m1/t1 {gemm,dense}: turn 0 PASSED 2.0x (roofline 0.5); SUBMITTED; turn
//     0 scripted.
//   B m1/t2 {attention}: COMPILE_ERROR, PASSED 0.6x (roofline 0.3), PASSED
//     1.0x (no roofline); LIMITS_EXCEEDED. Rescued; best kernel 1.0x.
//   C m2/t1 {gemm,dense}: RUNTIME_ERROR, TIMEOUT, LIBRARY_FALLBACK;
//     LIMITS_EXCEEDED; the trajectory row is simulated.
//   D m2/t2 {}: no kernel, then a kernel waiting for evaluation;
//     AWAITING_EVAL; turn 0 scripted, turn 1 simulated.
// Model latencies 100..900 and eval times 10..70 in the order of the turns.
inline std::vector<TrajectoryFacts> FourTrajectories() {
  TrajectoryFacts a =
      Trajectory("m1", "t1", {"gemm", "dense"}, v1::SUBMITTED, {Passed(100, 10, 2.0, 0.5)});
  a.turns[0].scripted = true;
  TrajectoryFacts b = Trajectory(
      "m1", "t2", {"attention"}, v1::LIMITS_EXCEEDED,
      {Evaluated(200, v1::COMPILE_ERROR, 20), Passed(300, 30, 0.6, 0.3), Passed(400, 40, 1.0)});
  TrajectoryFacts c =
      Trajectory("m2", "t1", {"gemm", "dense"}, v1::LIMITS_EXCEEDED,
                 {Evaluated(500, v1::RUNTIME_ERROR, 50), Evaluated(600, v1::TIMEOUT, 60),
                  Evaluated(700, v1::LIBRARY_FALLBACK, 70)});
  c.simulated = true;
  TrajectoryFacts d = Trajectory("m2", "t2", {}, v1::AWAITING_EVAL, {Answer(800), Pending(900)});
  d.turns[0].scripted = true;
  d.turns[1].simulated = true;
  return {a, b, c, d};
}

// A LIBRARY_FALLBACK turn; `checks_passed`: its outputs passed the checks.
inline TurnFacts Fallback(int64_t latency_ms, bool checks_passed) {
  TurnFacts turn = Evaluated(latency_ms, v1::LIBRARY_FALLBACK, 10);
  turn.fallback_correct = checks_passed;
  return turn;
}

// Fallbacks (docs/REPORTS.md, "Fallbacks"), worked out in metrics_test.cc:
//   F1 m1/t1: PASSED.
//   F2 m1/t2: a fallback that passed the checks, then PASSED.
//   F3 m2/t1: a fallback that passed the checks.
//   F4 m2/t2: a fallback whose outputs were wrong, then INCORRECT_NUMERICAL.
inline std::vector<TrajectoryFacts> FallbackTrajectories() {
  return {
      Trajectory("m1", "t1", {}, v1::LIMITS_EXCEEDED, {Passed(100, 10, 1.5)}),
      Trajectory("m1", "t2", {}, v1::LIMITS_EXCEEDED, {Fallback(200, true), Passed(300, 10, 1.2)}),
      Trajectory("m2", "t1", {}, v1::LIMITS_EXCEEDED, {Fallback(400, true)}),
      Trajectory("m2", "t2", {}, v1::LIMITS_EXCEEDED,
                 {Fallback(500, false), Evaluated(600, v1::INCORRECT_NUMERICAL, 10)}),
  };
}

// The report of `trajectories` with `groupings` (which must be valid).
// A correct turn with the scores' figures (docs/REPORTS.md, "Scores").
inline TurnFacts Scored(double speedup, double weighted_roofline, double sol_score) {
  TurnFacts turn = Passed(100, 10, speedup);
  turn.weighted_roofline = weighted_roofline;
  turn.sol_score = sol_score;
  return turn;
}

// The scores of results/report/scores_test.cc, worked out there by hand:
//   S1 m1 gemm, importance 3: PASSED 2.0x (roofline 0.5, SOL-Score 0.75).
//   S2 m1 attention, importance 1: COMPILE_ERROR, PASSED 0.5x (0.2, 0.25),
//     PASSED 0.8x (0.4, 0.4): best kernel 0.8x; both correct turns rescued.
//   S3 m2 gemm, importance 2: INCORRECT_NUMERICAL: scores 0.
//   S4 m2 attention, importance 4: PASSED 1.5x with no roofline and no
//     SOL-Score: left out of both.
inline std::vector<TrajectoryFacts> ScoreTrajectories() {
  auto weighted = [](std::string model, std::string category, double importance,
                     std::vector<TurnFacts> turns) {
    TrajectoryFacts t = Trajectory(std::move(model), "t", {std::move(category)},
                                   v1::LIMITS_EXCEEDED, std::move(turns));
    t.importance = importance;
    return t;
  };
  return {
      weighted("m1", "gemm", 3, {Scored(2.0, 0.5, 0.75)}),
      weighted("m1", "attention", 1,
               {Evaluated(100, v1::COMPILE_ERROR, 10), Scored(0.5, 0.2, 0.25),
                Scored(0.8, 0.4, 0.4)}),
      weighted("m2", "gemm", 2, {Evaluated(100, v1::INCORRECT_NUMERICAL, 10)}),
      weighted("m2", "attention", 4, {Scored(1.5, 0, -1)}),
  };
}

inline v1::ExperimentReport Build(const std::vector<TrajectoryFacts>& trajectories,
                                  std::vector<std::vector<std::string>> groupings) {
  absl::StatusOr<ReportBuilder> builder = ReportBuilder::Create(std::move(groupings));
  if (!builder.ok()) {
    ADD_FAILURE() << builder.status();
    return {};
  }
  for (const TrajectoryFacts& trajectory : trajectories) builder->Add(trajectory);
  return builder->Finish();
}

}  // namespace ptxbench::report::fixtures

#endif  // PTXBENCH_RESULTS_REPORT_TESTING_TRAJECTORIES_H_
