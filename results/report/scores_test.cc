// The scores and the variance in correctness (docs/REPORTS.md, "Scores" and
// "Variance in correctness"), each on trajectories worked out by hand.

#include "results/report/scores.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "results/report/deviance.h"
#include "results/report/metrics.h"
#include "results/report/testing/trajectories.h"

namespace ptxbench::report {
namespace {

using fixtures::Build;
using fixtures::Evaluated;
using fixtures::Passed;
using fixtures::ScoreTrajectories;
using fixtures::Trajectory;
using v1::GroupReport;

TEST(ScoresTest, ImportanceWeightedRooflineAndSolScoreOfTheBestKernels) {
  const v1::ExperimentReport report = Build(ScoreTrajectories(), {{"model"}});
  const GroupReport& total = report.total();
  // S1 (3, 0.5), S2 (1, 0.4), S3 (2, 0); S4 left out.
  EXPECT_EQ(total.weighted_roofline_count(), 3);
  EXPECT_DOUBLE_EQ(total.weighted_roofline_weight(), 6);
  EXPECT_DOUBLE_EQ(total.weighted_roofline(), (3 * 0.5 + 1 * 0.4 + 2 * 0) / 6);
  // S1 (3, 0.75), S2 (1, 0.4), S3 (2, 0); S4 left out.
  EXPECT_EQ(total.sol_score_count(), 3);
  EXPECT_DOUBLE_EQ(total.sol_score_weight(), 6);
  EXPECT_DOUBLE_EQ(total.sol_score(), (3 * 0.75 + 1 * 0.4 + 2 * 0) / 6);

  const GroupReport& m1 = report.groupings(0).groups(0);
  ASSERT_EQ(m1.key().at("model"), "m1");
  EXPECT_DOUBLE_EQ(m1.weighted_roofline(), (3 * 0.5 + 1 * 0.4) / 4);
  EXPECT_DOUBLE_EQ(m1.sol_score(), (3 * 0.75 + 1 * 0.4) / 4);
  const GroupReport& m2 = report.groupings(0).groups(1);
  // S3 only: an incorrect trajectory scores 0 with its weight.
  EXPECT_EQ(m2.sol_score_count(), 1);
  EXPECT_DOUBLE_EQ(m2.sol_score_weight(), 2);
  EXPECT_DOUBLE_EQ(m2.sol_score(), 0);
}

TEST(ScoresTest, AnEmptyGroupOrAllWeightsZeroScoresZero) {
  std::vector<TrajectoryFacts> trajectories = ScoreTrajectories();
  for (TrajectoryFacts& t : trajectories) t.importance = 0;
  const GroupReport total = Build(trajectories, {}).total();
  EXPECT_EQ(total.sol_score_count(), 3);
  EXPECT_DOUBLE_EQ(total.sol_score_weight(), 0);
  EXPECT_DOUBLE_EQ(total.sol_score(), 0);
  EXPECT_DOUBLE_EQ(Build({}, {}).total().weighted_roofline(), 0);
}

TEST(ScoresTest, CorrectButSlowerThanTheReferenceCountsCorrectTurns) {
  const GroupReport total = Build(ScoreTrajectories(), {}).total();
  // Correct timed turns: 2.0, 0.5, 0.8, 1.5; slower than the reference:
  // 0.5 and 0.8 (every correct kernel, not only the best).
  EXPECT_EQ(total.timed_correct_turns(), 4);
  EXPECT_EQ(total.slower_turns(), 2);
  EXPECT_DOUBLE_EQ(total.slower_share(), 0.5);
}

TEST(ScoresTest, RescuedAndPersistentSpeedupsPerTurn) {
  const GroupReport total = Build(ScoreTrajectories(), {}).total();
  // Persistent: S1's 2.0 and S4's 1.5 (turn 0); rescued: S2's 0.5 (turn 1)
  // and 0.8 (turn 2).
  EXPECT_EQ(total.rescue_speedups().persistent().count(), 2);
  EXPECT_DOUBLE_EQ(total.rescue_speedups().persistent().geomean(), std::sqrt(2.0 * 1.5));
  EXPECT_EQ(total.rescue_speedups().rescued().count(), 2);
  EXPECT_DOUBLE_EQ(total.rescue_speedups().rescued().geomean(), std::sqrt(0.5 * 0.8));
  ASSERT_EQ(total.rescue_speedups_by_turn_size(), 3);
  EXPECT_EQ(total.rescue_speedups_by_turn(0).turn(), 0);
  EXPECT_EQ(total.rescue_speedups_by_turn(0).persistent().count(), 2);
  EXPECT_EQ(total.rescue_speedups_by_turn(0).rescued().count(), 0);
  EXPECT_DOUBLE_EQ(total.rescue_speedups_by_turn(0).rescued().geomean(), 0);
  EXPECT_EQ(total.rescue_speedups_by_turn(1).rescued().count(), 1);
  EXPECT_DOUBLE_EQ(total.rescue_speedups_by_turn(1).rescued().geomean(), 0.5);
  EXPECT_DOUBLE_EQ(total.rescue_speedups_by_turn(2).rescued().geomean(), 0.8);
}

TEST(ScoresTest, ACorrectTurnAfterAFailureIsRescuedEvenAfterAnEarlierPass) {
  // PASSED, then a kernel that fails, then PASSED again; a turn without a
  // kernel fails as much as a failed evaluation.
  const GroupReport total =
      Build({Trajectory("m", "t", {}, v1::LIMITS_EXCEEDED,
                        {Passed(100, 10, 1.0), Evaluated(100, v1::RUNTIME_ERROR, 10),
                         Passed(100, 10, 4.0)}),
             Trajectory("m", "t", {}, v1::LIMITS_EXCEEDED,
                        {fixtures::Answer(100), Passed(100, 10, 2.0)})},
            {})
          .total();
  EXPECT_EQ(total.rescue_speedups().persistent().count(), 1);
  EXPECT_DOUBLE_EQ(total.rescue_speedups().persistent().geomean(), 1.0);
  EXPECT_EQ(total.rescue_speedups().rescued().count(), 2);
  EXPECT_DOUBLE_EQ(total.rescue_speedups().rescued().geomean(), std::sqrt(4.0 * 2.0));
}

TEST(ScoresTest, ATurnCutCountsOnlyItsTurns) {
  const v1::ExperimentReport report = Build(ScoreTrajectories(), {{"turn"}});
  // Cut after turn 2, S2's best kernel is its 0.5x (0.2, 0.25).
  const GroupReport& t2 = report.groupings(0).groups(1);
  ASSERT_EQ(t2.key().at("turn"), "2");
  EXPECT_DOUBLE_EQ(t2.sol_score(), (3 * 0.75 + 1 * 0.25) / 6);
  EXPECT_EQ(t2.timed_correct_turns(), 3);
}

TrajectoryFacts Outcome(std::string model, std::vector<std::string> categories, bool correct) {
  return Trajectory(std::move(model), "t", std::move(categories), v1::LIMITS_EXCEEDED,
                    {correct ? Passed(100, 10, 1.0) : Evaluated(100, v1::INCORRECT_NUMERICAL, 10)});
}

TEST(VarianceTest, TheModelExplainsAllAndTheCategoryNothing) {
  // Each model always or never correct; each category half and half.
  const v1::CorrectnessVariance v =
      Build({Outcome("m1", {"a"}, true), Outcome("m1", {"b"}, true), Outcome("m2", {"a"}, false),
             Outcome("m2", {"b"}, false)},
            {})
          .correctness_variance();
  EXPECT_EQ(v.trajectories(), 4);
  EXPECT_EQ(v.correct(), 2);
  // -2 (2 ln 1/2 + 2 ln 1/2).
  EXPECT_NEAR(v.null_deviance(), 8 * std::log(2.0), 1e-12);
  EXPECT_EQ(v.model_levels(), 2);
  EXPECT_NEAR(v.model_deviance(), 0, 1e-12);
  EXPECT_DOUBLE_EQ(v.model_share(), 1);
  EXPECT_EQ(v.category_levels(), 2);
  EXPECT_NEAR(v.category_deviance(), v.null_deviance(), 1e-12);
  EXPECT_NEAR(v.category_share(), 0, 1e-12);
}

TEST(VarianceTest, AHandComputedCategoryShare) {
  // Category a: 2 of 3 correct; b: 0 of 3. One model.
  const v1::CorrectnessVariance v =
      Build({Outcome("m", {"a"}, true), Outcome("m", {"a"}, true), Outcome("m", {"a"}, false),
             Outcome("m", {"b"}, false), Outcome("m", {"b"}, false), Outcome("m", {"b"}, false)},
            {})
          .correctness_variance();
  // Null: -2 (2 ln 1/3 + 4 ln 2/3) = 12 ln 3 - 8 ln 2.
  EXPECT_NEAR(v.null_deviance(), 12 * std::log(3.0) - 8 * std::log(2.0), 1e-12);
  // Category: -2 (2 ln 2/3 + 1 ln 1/3) = 6 ln 3 - 4 ln 2 (b fits exactly).
  EXPECT_NEAR(v.category_deviance(), 6 * std::log(3.0) - 4 * std::log(2.0), 1e-12);
  EXPECT_NEAR(v.category_share(), 0.5, 1e-12);
  EXPECT_EQ(v.model_levels(), 1);
  EXPECT_NEAR(v.model_share(), 0, 1e-12);
}

TEST(VarianceTest, NoVarianceToExplainGivesZeroShares) {
  const v1::CorrectnessVariance v =
      Build({Outcome("m1", {"a"}, true), Outcome("m2", {"b"}, true)}, {}).correctness_variance();
  EXPECT_DOUBLE_EQ(v.null_deviance(), 0);
  EXPECT_DOUBLE_EQ(v.category_share(), 0);
  EXPECT_DOUBLE_EQ(v.model_share(), 0);
}

TEST(VarianceTest, ATrajectoryIsOneObservationInTheLevelOfItsCategories) {
  std::string level;
  CategoryLevel(Outcome("m", {"gemm", "dense"}, true), &level);
  EXPECT_EQ(level, "gemm+dense");
  CategoryLevel(Outcome("m", {}, true), &level);
  EXPECT_EQ(level, "");
  const v1::CorrectnessVariance v =
      Build({Outcome("m", {"gemm", "dense"}, true), Outcome("m", {"gemm"}, false)}, {})
          .correctness_variance();
  EXPECT_EQ(v.trajectories(), 2);
  EXPECT_EQ(v.category_levels(), 2);
  EXPECT_DOUBLE_EQ(v.category_share(), 1);
}

}  // namespace
}  // namespace ptxbench::report
