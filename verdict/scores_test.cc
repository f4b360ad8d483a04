#include "verdict/scores.h"

#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "verdict/verdict.h"

namespace ptxbench::verdict {
namespace {

namespace v1 = ::ptxbench::v1;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(WorkloadSolScoreTest, HandComputedFromTheTimes) {
  // T_k = 1, T_b = 2, T_SOL = 0.5: 1 / (1 + 0.5 / 1.5) = 0.75.
  EXPECT_DOUBLE_EQ(*WorkloadSolScore(2, 0.5), 0.75);
  // As fast as the reference: one half, whatever the roofline.
  EXPECT_DOUBLE_EQ(*WorkloadSolScore(1, 0.25), 0.5);
  EXPECT_DOUBLE_EQ(*WorkloadSolScore(1, 0.9), 0.5);
  // T_k = 1, T_b = 0.5, T_SOL = 0.25: 1 / (1 + 0.75 / 0.25) = 0.25.
  EXPECT_DOUBLE_EQ(*WorkloadSolScore(0.5, 0.25), 0.25);
  // At speed of light, or past it by the model: 1.
  EXPECT_DOUBLE_EQ(*WorkloadSolScore(4, 1), 1);
  EXPECT_DOUBLE_EQ(*WorkloadSolScore(4, 1.5), 1);
}

TEST(WorkloadSolScoreTest, NoScoreWithoutASpeedOfLightBelowTheReference) {
  EXPECT_FALSE(WorkloadSolScore(2, 0).has_value());    // no roofline known
  EXPECT_FALSE(WorkloadSolScore(0, 0.5).has_value());  // not timed
  EXPECT_FALSE(WorkloadSolScore(kNaN, 0.5).has_value());
  EXPECT_FALSE(WorkloadSolScore(2, kNaN).has_value());
  // T_SOL >= T_b: the reference is at or past the roofline.
  EXPECT_FALSE(WorkloadSolScore(0.5, 0.5).has_value());
  EXPECT_FALSE(WorkloadSolScore(0.5, 0.6).has_value());
  EXPECT_FALSE(WorkloadSolScore(1.2, 1.5).has_value());
}

v1::EvalResult ThreeWorkloads() {
  v1::EvalResult r;
  auto add = [&r](const std::string& uuid, double speedup, double roofline) {
    v1::WorkloadTrace* t = r.add_traces();
    t->set_workload_uuid(uuid);
    t->set_status(v1::PASSED);
    t->set_speedup(speedup);
    t->set_roofline_fraction(roofline);
  };
  add("a", 2, 0.5);   // SOL-Score 0.75
  add("b", 1, 0.25);  // SOL-Score 0.5
  add("c", 1.5, 0);   // no roofline, no SOL-Score
  Summarize(r);
  return r;
}

TEST(WeightedScoresTest, EachWorkloadWeighsItsImportance) {
  const v1::EvalResult r = ThreeWorkloads();
  const Scores scores = WeightedScores(r, [](const std::string& uuid) {
    return uuid == "a" ? 3.0 : uuid == "b" ? 1.0 : 10.0;
  });
  // (3 * 0.5 + 1 * 0.25) / 4 and (3 * 0.75 + 1 * 0.5) / 4: "c" has neither.
  EXPECT_DOUBLE_EQ(scores.weighted_roofline, 0.4375);
  EXPECT_DOUBLE_EQ(scores.sol_score, 0.6875);
}

TEST(WeightedScoresTest, WithoutImportancesEveryWorkloadWeighsOne) {
  const Scores scores = WeightedScores(ThreeWorkloads(), nullptr);
  EXPECT_DOUBLE_EQ(scores.weighted_roofline, 0.375);
  EXPECT_DOUBLE_EQ(scores.sol_score, 0.625);
}

TEST(WeightedScoresTest, AnIncorrectEvaluationHasNone) {
  v1::EvalResult r = ThreeWorkloads();
  r.mutable_traces(1)->set_status(v1::INCORRECT_NUMERICAL);
  Summarize(r);
  const Scores scores = WeightedScores(r, nullptr);
  EXPECT_EQ(scores.weighted_roofline, 0);
  EXPECT_LT(scores.sol_score, 0);
}

TEST(WeightedScoresTest, WeightsOfZeroOrNotANumberLeaveTheFigureUnknown) {
  const Scores scores = WeightedScores(ThreeWorkloads(), [](const std::string& uuid) {
    return uuid == "a" ? 0.0 : uuid == "b" ? kNaN : 1.0;
  });
  EXPECT_EQ(scores.weighted_roofline, 0);
  EXPECT_LT(scores.sol_score, 0);
}

}  // namespace
}  // namespace ptxbench::verdict
