#include "results/report/metrics.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "results/report/testing/trajectories.h"

namespace ptxbench::report {
namespace {

using fixtures::Answer;
using fixtures::Build;
using fixtures::Evaluated;
using fixtures::FourTrajectories;
using fixtures::Passed;
using fixtures::Pending;
using fixtures::Trajectory;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using v1::GroupReport;

std::vector<int64_t> PassCounts(const GroupReport& group) {
  std::vector<int64_t> counts;
  for (const auto& pass : group.pass_at_turn()) counts.push_back(pass.count());
  return counts;
}

std::vector<int64_t> FastCounts(const GroupReport& group) {
  std::vector<int64_t> counts;
  for (const auto& fast : group.fast_p()) counts.push_back(fast.count());
  return counts;
}

// The non-zero classes of the turns with index `turn`.
std::map<std::string, int64_t> Classes(const GroupReport& group, int turn) {
  std::map<std::string, int64_t> classes;
  EXPECT_EQ(group.outcomes_by_turn(turn).turn(), turn);
  EXPECT_EQ(group.outcomes_by_turn(turn).classes_size(), 10);  // every class, zeros included
  for (const auto& [name, count] : group.outcomes_by_turn(turn).classes()) {
    if (count > 0) classes[name] = count;
  }
  return classes;
}

std::vector<int64_t> BinCounts(const GroupReport& group) {
  std::vector<int64_t> counts;
  for (const auto& bin : group.speedup_histogram()) counts.push_back(bin.count());
  return counts;
}

TEST(ReportBuilderTest, TotalOfFourTrajectories) {
  const GroupReport total = Build(FourTrajectories(), {}).total();
  EXPECT_TRUE(total.key().empty());
  EXPECT_EQ(total.trajectories(), 4);
  EXPECT_EQ(total.finished(), 3);  // D is live
  const std::map<std::string, int64_t> by_state(total.by_state().begin(), total.by_state().end());
  EXPECT_THAT(by_state,
              ElementsAre(Pair("AWAITING_EVAL", 1), Pair("AWAITING_MODEL", 0), Pair("CANCELLED", 0),
                          Pair("FAILED", 0), Pair("LIMITS_EXCEEDED", 2), Pair("SUBMITTED", 1)));

  // Correct: A (turn 0), B (turn 1). pass@t for t = 1..3: A; A,B; A,B.
  EXPECT_EQ(total.correct(), 2);
  EXPECT_DOUBLE_EQ(total.correct_rate(), 0.5);
  EXPECT_THAT(PassCounts(total), ElementsAre(1, 2, 2));
  EXPECT_EQ(total.pass_at_turn(0).turn(), 1);
  EXPECT_DOUBLE_EQ(total.pass_at_turn(0).rate(), 0.25);
  EXPECT_DOUBLE_EQ(total.pass_at_turn(2).rate(), 0.5);
  EXPECT_EQ(total.target_met(), 1);
  EXPECT_DOUBLE_EQ(total.target_met_rate(), 0.25);

  // Best kernels: A 2.0, B 1.0 (its 0.6 is not the best). Strictly greater:
  // p = 1 leaves out B's 1.0 and p = 2 leaves out A's 2.0.
  ASSERT_EQ(total.fast_p_size(), 6);
  EXPECT_DOUBLE_EQ(total.fast_p(3).p(), 1.0);
  EXPECT_THAT(FastCounts(total), ElementsAre(2, 2, 2, 1, 1, 0));
  EXPECT_DOUBLE_EQ(total.fast_p(3).rate(), 0.25);
  EXPECT_EQ(total.speedup_count(), 2);
  EXPECT_DOUBLE_EQ(total.geomean_speedup(), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(total.best_speedup(), 2.0);
  // 1.0 in [1, 2^0.5) (bin 7), 2.0 in [2, 2^1.5) (bin 9).
  EXPECT_THAT(BinCounts(total), ElementsAre(0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0));
  // Only A's best kernel has a roofline; B's 0.3 belongs to a kernel that is
  // not its best.
  EXPECT_EQ(total.roofline_count(), 1);
  EXPECT_DOUBLE_EQ(total.roofline_fraction(), 0.5);

  ASSERT_EQ(total.outcomes_by_turn_size(), 3);
  EXPECT_THAT(Classes(total, 0), ElementsAre(Pair("compile_error", 1), Pair("no_kernel", 1),
                                             Pair("passed", 1), Pair("runtime_error", 1)));
  EXPECT_THAT(Classes(total, 1),
              ElementsAre(Pair("passed", 1), Pair("pending", 1), Pair("timeout", 1)));
  EXPECT_THAT(Classes(total, 2), ElementsAre(Pair("library_fallback", 1), Pair("passed", 1)));

  // Turn 0 failed: B, C, D (no kernel); B was rescued.
  EXPECT_EQ(total.first_turn_failed(), 3);
  EXPECT_EQ(total.rescued(), 1);
  EXPECT_DOUBLE_EQ(total.rescue_rate(), 1.0 / 3);

  // 9 answered turns (A 1, B 3, C 3, D 2), 7 evaluated (D's none).
  EXPECT_EQ(total.model_calls(), 9);
  EXPECT_EQ(total.evaluations(), 7);
  EXPECT_EQ(total.tokens().input_tokens(), 9000);
  EXPECT_EQ(total.tokens().output_tokens(), 900);
  EXPECT_EQ(total.tokens().reasoning_tokens(), 90);
  EXPECT_EQ(total.tokens().cached_tokens(), 9);
  EXPECT_DOUBLE_EQ(total.cost_usd(), 0.09);
  EXPECT_DOUBLE_EQ(total.cost_per_correct_usd(), 0.045);
  // Latencies 100..900: p50 at rank ceil(4.5) = 5, p95 at ceil(8.55) = 9.
  EXPECT_EQ(total.model_latency_ms().count(), 9);
  EXPECT_EQ(total.model_latency_ms().p50(), 500);
  EXPECT_EQ(total.model_latency_ms().p95(), 900);
  // Eval times 10..70: p50 at rank ceil(3.5) = 4, p95 at ceil(6.65) = 7.
  EXPECT_EQ(total.eval_time_ms().count(), 7);
  EXPECT_EQ(total.eval_time_ms().p50(), 40);
  EXPECT_EQ(total.eval_time_ms().p95(), 70);

  // C by its row, D by its turn 1; scripted: A's and D's turn 0.
  EXPECT_EQ(total.simulated_trajectories(), 2);
  EXPECT_EQ(total.scripted_turns(), 2);
}

TEST(ReportBuilderTest, GroupsByModelAndByModelAndTag) {
  const v1::ExperimentReport report = Build(FourTrajectories(), {{"model"}, {"model", "tag"}});
  ASSERT_EQ(report.groupings_size(), 2);
  const v1::GroupingReport& by_model = report.groupings(0);
  EXPECT_THAT(by_model.by(), ElementsAre("model"));
  ASSERT_EQ(by_model.groups_size(), 2);
  const GroupReport& m1 = by_model.groups(0);  // A, B
  const GroupReport& m2 = by_model.groups(1);  // C, D
  EXPECT_THAT(m1.key(), ElementsAre(Pair("model", "m1")));
  EXPECT_EQ(m1.trajectories(), 2);
  EXPECT_DOUBLE_EQ(m1.correct_rate(), 1.0);
  EXPECT_THAT(PassCounts(m1), ElementsAre(1, 2, 2));
  EXPECT_THAT(FastCounts(m1), ElementsAre(2, 2, 2, 1, 1, 0));
  EXPECT_DOUBLE_EQ(m1.cost_usd(), 0.04);
  EXPECT_DOUBLE_EQ(m1.cost_per_correct_usd(), 0.02);
  EXPECT_EQ(m1.first_turn_failed(), 1);
  EXPECT_EQ(m1.rescued(), 1);
  EXPECT_EQ(m1.simulated_trajectories(), 0);
  EXPECT_EQ(m1.scripted_turns(), 1);

  EXPECT_THAT(m2.key(), ElementsAre(Pair("model", "m2")));
  EXPECT_EQ(m2.correct(), 0);
  EXPECT_THAT(PassCounts(m2), ElementsAre(0, 0, 0));
  EXPECT_DOUBLE_EQ(m2.cost_per_correct_usd(), 0);  // no correct trajectory
  EXPECT_EQ(m2.geomean_speedup(), 0);
  EXPECT_EQ(m2.first_turn_failed(), 2);
  EXPECT_EQ(m2.rescued(), 0);
  EXPECT_DOUBLE_EQ(m2.rescue_rate(), 0);
  EXPECT_EQ(m2.simulated_trajectories(), 2);
  EXPECT_EQ(m2.scripted_turns(), 1);

  const v1::GroupingReport& by_model_tag = report.groupings(1);
  std::vector<std::string> keys;
  for (const GroupReport& group : by_model_tag.groups()) {
    keys.push_back(group.key().at("model") + "/" + group.key().at("tag"));
    EXPECT_EQ(group.trajectories(), 1);
  }
  EXPECT_THAT(keys, ElementsAre("m1/t1", "m1/t2", "m2/t1", "m2/t2"));
}

TEST(ReportBuilderTest, CategoryCountsOnceInEachAndNoneIsEmpty) {
  const v1::GroupingReport grouping = Build(FourTrajectories(), {{"category"}}).groupings(0);
  std::vector<std::pair<std::string, int64_t>> groups;
  for (const GroupReport& group : grouping.groups()) {
    groups.emplace_back(group.key().at("category"), group.trajectories());
  }
  // D has no category: group "". A and C count in both of theirs.
  EXPECT_THAT(groups,
              ElementsAre(Pair("", 1), Pair("attention", 1), Pair("dense", 2), Pair("gemm", 2)));
  EXPECT_EQ(grouping.groups(3).correct(), 1);  // gemm: A
}

TEST(ReportBuilderTest, TurnDimensionCutsTrajectories) {
  const v1::GroupingReport grouping = Build(FourTrajectories(), {{"turn"}}).groupings(0);
  ASSERT_EQ(grouping.groups_size(), 3);

  // t = 1: A SUBMITTED (ended within 1 turn); B, C, D went on to a turn 2,
  // so their cut is at its limit: LIMITS_EXCEEDED.
  const GroupReport& t1 = grouping.groups(0);
  EXPECT_THAT(t1.key(), ElementsAre(Pair("turn", "1")));
  EXPECT_EQ(t1.trajectories(), 4);
  EXPECT_EQ(t1.finished(), 4);
  EXPECT_EQ(t1.by_state().at("LIMITS_EXCEEDED"), 3);
  EXPECT_EQ(t1.target_met(), 1);
  EXPECT_EQ(t1.correct(), 1);
  EXPECT_THAT(PassCounts(t1), ElementsAre(1));
  EXPECT_THAT(FastCounts(t1), ElementsAre(1, 1, 1, 1, 1, 0));
  ASSERT_EQ(t1.outcomes_by_turn_size(), 1);
  EXPECT_EQ(t1.first_turn_failed(), 3);
  EXPECT_EQ(t1.rescued(), 0);
  EXPECT_EQ(t1.model_calls(), 4);
  EXPECT_EQ(t1.evaluations(), 3);
  EXPECT_DOUBLE_EQ(t1.cost_usd(), 0.04);
  // {100, 200, 500, 800}: p50 at rank ceil(2) = 2, p95 at ceil(3.8) = 4.
  EXPECT_EQ(t1.model_latency_ms().p50(), 200);
  EXPECT_EQ(t1.model_latency_ms().p95(), 800);
  // {10, 20, 50}: p50 at rank ceil(1.5) = 2, p95 at ceil(2.85) = 3.
  EXPECT_EQ(t1.eval_time_ms().p50(), 20);
  EXPECT_EQ(t1.eval_time_ms().p95(), 50);
  EXPECT_EQ(t1.simulated_trajectories(), 1);  // C's row; D's simulated turn is cut
  EXPECT_EQ(t1.scripted_turns(), 2);

  // t = 2: B's best kernel so far is 0.6x; D has 2 turns, the last one
  // pending, so it keeps its live state.
  const GroupReport& t2 = grouping.groups(1);
  EXPECT_THAT(t2.key(), ElementsAre(Pair("turn", "2")));
  EXPECT_EQ(t2.finished(), 3);
  EXPECT_EQ(t2.by_state().at("AWAITING_EVAL"), 1);
  EXPECT_EQ(t2.by_state().at("LIMITS_EXCEEDED"), 2);
  EXPECT_THAT(PassCounts(t2), ElementsAre(1, 2));
  EXPECT_THAT(FastCounts(t2), ElementsAre(2, 2, 1, 1, 1, 0));
  EXPECT_DOUBLE_EQ(t2.geomean_speedup(), std::sqrt(2.0 * 0.6));
  EXPECT_DOUBLE_EQ(t2.roofline_fraction(), (0.5 + 0.3) / 2);
  EXPECT_EQ(t2.rescued(), 1);
  EXPECT_EQ(t2.simulated_trajectories(), 2);

  // t = 3: the whole trajectories.
  const GroupReport& t3 = grouping.groups(2);
  const GroupReport total = Build(FourTrajectories(), {}).total();
  EXPECT_EQ(t3.by_state().at("LIMITS_EXCEEDED"), 2);
  EXPECT_THAT(PassCounts(t3), ElementsAre(1, 2, 2));
  EXPECT_EQ(FastCounts(t3), FastCounts(total));
  EXPECT_EQ(t3.cost_usd(), total.cost_usd());
}

TEST(ReportBuilderTest, TurnDimensionStatesOfLiveAndEndedTrajectories) {
  // Live with turn 1 done: at its limit in group 1, live in 2 and 3.
  TrajectoryFacts live =
      Trajectory("m", "t", {}, v1::AWAITING_MODEL, {Evaluated(1, v1::COMPILE_ERROR, 1)});
  // Ended with one turn: FAILED in every group (when after turn 1 it failed
  // is not known).
  TrajectoryFacts failed =
      Trajectory("m", "t", {}, v1::FAILED, {Evaluated(1, v1::INCORRECT_SHAPE, 1)});
  const v1::GroupingReport grouping = Build({live, failed}, {{"turn"}}).groupings(0);
  ASSERT_EQ(grouping.groups_size(), 3);
  EXPECT_EQ(grouping.groups(0).by_state().at("LIMITS_EXCEEDED"), 1);
  EXPECT_EQ(grouping.groups(0).by_state().at("FAILED"), 1);
  for (int t = 1; t < 3; ++t) {
    EXPECT_EQ(grouping.groups(t).by_state().at("AWAITING_MODEL"), 1);
    EXPECT_EQ(grouping.groups(t).by_state().at("FAILED"), 1);
    EXPECT_EQ(PassCounts(grouping.groups(t)).size(), static_cast<size_t>(t + 1));
  }
}

TEST(ReportBuilderTest, TurnsSortNumerically) {
  TrajectoryFacts trajectory = Trajectory("m", "t", {}, v1::AWAITING_MODEL, {});
  trajectory.num_turns = 11;
  const v1::GroupingReport grouping = Build({trajectory}, {{"turn", "model"}}).groupings(0);
  std::vector<std::string> turns;
  for (const GroupReport& group : grouping.groups()) turns.push_back(group.key().at("turn"));
  EXPECT_THAT(turns, ElementsAre("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"));
}

TEST(ReportBuilderTest, SpeedupBinsAndStrictFastP) {
  // One correct trajectory per best speedup.
  const std::vector<double> speedups = {0.05, 0.125, 0.5, 0.8, 1.0, 1.5, 2.0, 9.0};
  std::vector<TrajectoryFacts> trajectories;
  for (double speedup : speedups) {
    trajectories.push_back(Trajectory("m", "t", {}, v1::LIMITS_EXCEEDED, {Passed(1, 1, speedup)}));
  }
  const GroupReport total = Build(trajectories, {}).total();
  // > 0: all 8; > 0.5: 5; > 0.8: 4; > 1: 3; > 1.5: 2; > 2: 1.
  EXPECT_THAT(FastCounts(total), ElementsAre(8, 5, 4, 3, 2, 1));
  EXPECT_DOUBLE_EQ(total.fast_p(1).rate(), 5.0 / 8);
  // Product 0.0675, so the geometric mean is 0.0675^(1/8).
  EXPECT_NEAR(total.geomean_speedup(), std::pow(0.0675, 1.0 / 8), 1e-12);
  EXPECT_DOUBLE_EQ(total.best_speedup(), 9.0);
  // Bins [0,2^-3) [2^-3,2^-2.5) ... [2^3,inf): 0.05 -> 0, 0.125 -> 1 (a low
  // edge is inside), 0.5 -> 5, 0.8 -> 6, 1.0 -> 7, 1.5 -> 8, 2.0 -> 9, 9 -> 13.
  EXPECT_THAT(BinCounts(total), ElementsAre(1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1));
  ASSERT_EQ(total.speedup_histogram_size(), 14);
  EXPECT_EQ(total.speedup_histogram(0).lo(), 0);
  EXPECT_EQ(total.speedup_histogram(0).hi(), 0.125);
  EXPECT_DOUBLE_EQ(total.speedup_histogram(1).hi(), std::sqrt(0.03125));
  EXPECT_EQ(total.speedup_histogram(7).lo(), 1);
  EXPECT_EQ(total.speedup_histogram(13).lo(), 8);
  EXPECT_EQ(total.speedup_histogram(13).hi(), 0);  // +inf
}

TEST(ReportBuilderTest, OutcomeClassesOfEveryStatus) {
  TurnFacts unspecified = Evaluated(1, v1::EVAL_STATUS_UNSPECIFIED, 1);
  TurnFacts unanswered;  // the model has not answered yet
  const std::vector<std::pair<TurnFacts, std::string>> cases = {
      {Passed(1, 1, 1), "passed"},
      {Evaluated(1, v1::INCORRECT_SHAPE, 1), "incorrect"},
      {Evaluated(1, v1::INCORRECT_DTYPE, 1), "incorrect"},
      {Evaluated(1, v1::INCORRECT_NUMERICAL, 1), "incorrect"},
      {Evaluated(1, v1::COMPILE_ERROR, 1), "compile_error"},
      {Evaluated(1, v1::RUNTIME_ERROR, 1), "runtime_error"},
      {Evaluated(1, v1::TIMEOUT, 1), "timeout"},
      {Evaluated(1, v1::LIBRARY_FALLBACK, 1), "library_fallback"},
      {Evaluated(1, v1::COMPILED, 1), "compiled"},
      {Evaluated(1, v1::INFRA_ERROR, 1), "infra_error"},
      {unspecified, "infra_error"},
      {Answer(1), "no_kernel"},
      {Pending(1), "pending"},
      {unanswered, "pending"},
  };
  for (const auto& [turn, expected] : cases) {
    EXPECT_EQ(kOutcomeClasses[OutcomeClass(turn)], expected);
  }
}

// The fallback figures of FallbackTrajectories: correct (fallback-free) F1,
// F2; correct by checks F1, F2, F3; turns correct by checks: 2 PASSED, 2
// fallbacks that passed the checks (F4's wrong fallback is neither).
// docs/REPORTS.md's example: three trajectories that hold a workload out.
TEST(ReportBuilderTest, HeldOutWorkloadsAreReportedApart) {
  TurnFacts found_out = fixtures::Evaluated(100, v1::INCORRECT_NUMERICAL, 10);
  found_out.shown_correct = true;  // passed what it was shown
  std::vector<TrajectoryFacts> held = {
      fixtures::Trajectory("m", "t", {}, v1::SUBMITTED, {fixtures::Passed(100, 10, 1.5)}),
      fixtures::Trajectory("m", "t", {}, v1::SUBMITTED, {found_out}),
      fixtures::Trajectory("m", "t", {}, v1::LIMITS_EXCEEDED,
                           {fixtures::Evaluated(100, v1::INCORRECT_NUMERICAL, 10)})};
  for (TrajectoryFacts& t : held) t.held_out = true;
  const GroupReport total = Build(held, {}).total();
  EXPECT_EQ(total.held_out_trajectories(), 3);
  EXPECT_EQ(total.correct(), 1);
  EXPECT_EQ(total.correct_on_shown(), 2);
  EXPECT_DOUBLE_EQ(total.correct_on_shown_rate(), 2.0 / 3);
  EXPECT_EQ(total.found_out(), 1);
  EXPECT_DOUBLE_EQ(total.found_out_rate(), 1.0 / 3);
  // Without held-out workloads: shown is all, nothing found out.
  const GroupReport plain = Build(fixtures::FallbackTrajectories(), {}).total();
  EXPECT_EQ(plain.held_out_trajectories(), 0);
  EXPECT_EQ(plain.correct_on_shown(), plain.correct());
  EXPECT_EQ(plain.found_out(), 0);
}

TEST(ReportBuilderTest, FallbackSharesAndThePassRateWithoutFallbacks) {
  const v1::ExperimentReport report =
      Build(fixtures::FallbackTrajectories(), {{"model"}, {"tag"}, {"turn"}});
  const GroupReport& total = report.total();
  EXPECT_EQ(total.correct(), 2);
  EXPECT_DOUBLE_EQ(total.correct_rate(), 0.5);
  EXPECT_EQ(total.correct_by_checks(), 3);
  EXPECT_DOUBLE_EQ(total.correct_by_checks_rate(), 0.75);
  EXPECT_EQ(total.passed_turns(), 2);
  EXPECT_EQ(total.fallback_correct_turns(), 2);
  EXPECT_DOUBLE_EQ(total.fallback_share(), 0.5);
  // Per model: m1 has 1 fallback of 3 correct-by-checks turns; m2's only
  // one is a fallback.
  const v1::GroupingReport& models = report.groupings(0);
  ASSERT_EQ(models.groups_size(), 2);
  EXPECT_EQ(models.groups(0).correct_by_checks(), 2);
  EXPECT_DOUBLE_EQ(models.groups(0).fallback_share(), 1.0 / 3);
  EXPECT_EQ(models.groups(1).correct(), 0);
  EXPECT_DOUBLE_EQ(models.groups(1).correct_by_checks_rate(), 0.5);
  EXPECT_DOUBLE_EQ(models.groups(1).fallback_share(), 1.0);
  // Per tag: t1 (F1, F3) and t2 (F2, F4) each 1 fallback of 2.
  const v1::GroupingReport& tags = report.groupings(1);
  ASSERT_EQ(tags.groups_size(), 2);
  for (const GroupReport& tag : tags.groups()) {
    EXPECT_EQ(tag.correct(), 1);
    EXPECT_DOUBLE_EQ(tag.fallback_share(), 0.5);
  }
  EXPECT_EQ(tags.groups(0).correct_by_checks(), 2);
  EXPECT_EQ(tags.groups(1).correct_by_checks(), 1);
  // Cut after turn 1, F2 is a fallback only: correct by checks, not correct.
  const GroupReport& turn1 = report.groupings(2).groups(0);
  EXPECT_EQ(turn1.correct(), 1);
  EXPECT_EQ(turn1.correct_by_checks(), 3);
  EXPECT_EQ(turn1.passed_turns(), 1);
  EXPECT_DOUBLE_EQ(turn1.fallback_share(), 2.0 / 3);
  // No turn correct by checks: a share of 0, not a division by zero.
  EXPECT_EQ(Build({Trajectory("m", "t", {}, v1::LIMITS_EXCEEDED,
                              {fixtures::Fallback(1, false)})},
                  {})
                .total()
                .fallback_share(),
            0);
}

TEST(ReportBuilderTest, CompileOnlyHasNoCorrectKernel) {
  const GroupReport total =
      Build({Trajectory("m", "t", {}, v1::LIMITS_EXCEEDED, {Evaluated(1, v1::COMPILED, 1)})}, {})
          .total();
  EXPECT_EQ(total.correct(), 0);
  EXPECT_EQ(total.speedup_count(), 0);
  EXPECT_EQ(total.first_turn_failed(), 1);
}

// An agent session: each turn is an evaluation reached through any number
// of model calls, and the calls after its last evaluation count with the
// whole trajectory, not with a turn (docs/REPORTS.md).
TEST(ReportBuilderTest, AnAgentSessionCountsEveryModelCallOnce) {
  TurnFacts first = Evaluated(1, v1::COMPILE_ERROR, 1);
  first.model_calls = 4;
  first.cost_usd = 0.40;
  first.usage.set_input_tokens(4000);
  TurnFacts second = Passed(1, 1, 2.0);
  second.model_calls = 0;  // evaluated again without asking the model
  second.cost_usd = 0;
  second.usage.Clear();
  TrajectoryFacts session = Trajectory("m", "t", {}, v1::SUBMITTED, {first, second});
  session.session_tail_calls = 2;
  session.session_tail_cost_usd = 0.20;
  session.session_tail_usage.set_input_tokens(2500);
  const v1::ExperimentReport report = Build({session}, {{"turn"}});
  EXPECT_EQ(report.total().model_calls(), 6);
  EXPECT_NEAR(report.total().cost_usd(), 0.60, 1e-9);
  EXPECT_NEAR(report.total().cost_per_correct_usd(), 0.60, 1e-9);
  EXPECT_EQ(report.total().tokens().input_tokens(), 6500);
  // Cut after its first evaluation, the session had made 4 calls.
  EXPECT_EQ(report.groupings(0).groups(0).model_calls(), 4);
  EXPECT_EQ(report.groupings(0).groups(1).model_calls(), 6);
}

TEST(ReportBuilderTest, EmptyGroupHasEveryKeyAndZeroRates) {
  const GroupReport total = Build({}, {{"model"}}).total();
  EXPECT_EQ(total.trajectories(), 0);
  EXPECT_EQ(total.by_state_size(), 6);  // every state but UNSPECIFIED
  ASSERT_EQ(total.fast_p_size(), 6);
  EXPECT_EQ(total.fast_p(0).rate(), 0);
  EXPECT_EQ(total.correct_rate(), 0);
  EXPECT_EQ(total.speedup_histogram_size(), 14);
  EXPECT_EQ(total.pass_at_turn_size(), 0);
  EXPECT_EQ(total.model_latency_ms().p50(), 0);
}

TEST(ReportBuilderTest, RefusesBadGroupings) {
  EXPECT_TRUE(ReportBuilder::Create({}).ok());
  const absl::Status empty = ReportBuilder::Create({{"model"}, {}}).status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.message(), HasSubstr("empty grouping"));
  const absl::Status unknown = ReportBuilder::Create({{"model", "modle"}}).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(), HasSubstr("\"modle\""));
  const absl::Status twice = ReportBuilder::Create({{"tag", "turn", "tag"}}).status();
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(twice.message(), HasSubstr("\"tag\" twice"));
}

TEST(ReportBuilderTest, ThresholdsAndVersion) {
  EXPECT_THAT(FastPThresholds(), ElementsAre(0, 0.5, 0.8, 1, 1.5, 2));
  EXPECT_STREQ(kMetricsVersion, "ptxbench.metrics.v3");
}

}  // namespace
}  // namespace ptxbench::report
