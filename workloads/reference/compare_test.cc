#include "workloads/reference/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace ptxbench::reference {
namespace {

TEST(CompareTest, ExactMatchPasses) {
  std::vector<float> y = {1.0f, -2.0f, 0.0f};
  auto r = CompareOutputs(y, y);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->passed);
  EXPECT_EQ(r->matched, 3);
  EXPECT_EQ(r->max_abs_error, 0.0);
  EXPECT_EQ(r->first_mismatch, -1);
}

// Failing needs both: large absolute AND large relative error.
TEST(CompareTest, ElementFailsOnlyWhenBothBoundsAreExceeded) {
  // abs 0.5 > atol but rel 0.5/1000 < rtol: passes.
  // abs 0.005 < atol though rel is huge: passes.
  // abs 0.5 and rel 0.5: fails.
  std::vector<float> x = {1000.5f, 0.005f, 1.5f};
  std::vector<float> y = {1000.0f, 0.0f, 1.0f};
  auto r = CompareOutputs(x, y);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matched, 2);
  EXPECT_EQ(r->first_mismatch, 2);
  EXPECT_FALSE(r->passed);
  EXPECT_DOUBLE_EQ(r->max_abs_error, 0.5);
  EXPECT_NEAR(r->max_rel_error, 0.005 / 1e-8, 1.0);
  EXPECT_NEAR(r->matched_ratio(), 2.0 / 3.0, 1e-12);
}

TEST(CompareTest, RequiredRatioBelowOneToleratesSomeMismatches) {
  std::vector<float> x = {1.0f, 2.0f, 3.0f, 9.0f};
  std::vector<float> y = {1.0f, 2.0f, 3.0f, 4.0f};
  Tolerance tol;
  tol.required_matched_ratio = 0.75;
  auto r = CompareOutputs(x, y, tol);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->passed);
  tol.required_matched_ratio = 0.76;
  EXPECT_FALSE(CompareOutputs(x, y, tol)->passed);
}

TEST(CompareTest, AnyNanOrInfFailsEvenWithALowRatio) {
  Tolerance tol;
  tol.required_matched_ratio = 0.0;
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<float> x = {1.0f, bad};
    std::vector<float> y = {1.0f, 2.0f};
    auto r = CompareOutputs(x, y, tol);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->nonfinite, 1);
    EXPECT_FALSE(r->passed);
  }
}

// KernelBench #165: expected values all below atol pass a kernel that
// writes zeros, element by element. A constant output where the expected
// values vary fails; a constant output where they are constant too passes.
TEST(CompareTest, AConstantOutputFailsWhereTheExpectedValuesVaryHoweverSmall) {
  const std::vector<float> small = {1e-4f, -3e-4f, 2e-5f, 5e-4f};
  for (float c : {0.0f, 1e-4f}) {
    const std::vector<float> constant(small.size(), c);
    auto r = CompareOutputs(constant, small);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->matched, 4) << "every element is within atol";
    EXPECT_TRUE(r->constant());
    EXPECT_FALSE(r->passed) << "a constant " << c;
  }
  // Zeros but for one right element are not constant; the output as a
  // whole still does not follow the expected values (relative L2 0.54).
  auto almost = CompareOutputs(std::vector<float>{0, 0, 0, 5e-4f}, small);
  EXPECT_FALSE(almost->constant());
  EXPECT_TRUE(almost->unrelated());
  EXPECT_FALSE(almost->passed);
  // Expected constant: a constant output is what is asked for.
  const std::vector<float> ones(4, 1.0f);
  EXPECT_TRUE(CompareOutputs(ones, ones)->passed);
  // The right values pass.
  EXPECT_TRUE(CompareOutputs(small, small)->passed);
}

// Small values unrelated to the expected ones pass element by element and
// vary, so they are not constant: the output as a whole does not follow the
// expected values (relative L2 error about 1.4). Outputs that follow them
// to a bf16 rounding step pass.
TEST(CompareTest, AnOutputThatDoesNotFollowTheExpectedValuesFails) {
  std::vector<float> expected, unrelated, rounded;
  for (int i = 0; i < 1000; ++i) {
    expected.push_back(1e-4f * std::sin(0.37f * i));
    unrelated.push_back(1e-4f * std::cos(1.91f * i + 0.5f));
    rounded.push_back(expected.back() * (1.0f + ((i % 2) ? 1.0f : -1.0f) / 256));
  }
  auto r = CompareOutputs(unrelated, expected);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matched, 1000) << "every element is within atol";
  EXPECT_FALSE(r->constant());
  EXPECT_GT(r->relative_l2(), 1.0);
  EXPECT_TRUE(r->unrelated());
  EXPECT_FALSE(r->passed);
  auto close = CompareOutputs(rounded, expected);
  EXPECT_NEAR(close->relative_l2(), 1.0 / 256, 1e-4);
  EXPECT_TRUE(close->passed);
  // Zeros: relative L2 error 1 (and constant).
  EXPECT_DOUBLE_EQ(CompareOutputs(std::vector<float>(1000, 0.0f), expected)->relative_l2(), 1.0);
  // Elements the required ratio lets fail are not in it: one wild element of
  // 1000 with 0.99 required still passes.
  std::vector<float> one_wild = expected;
  one_wild[7] = 5.0f;
  Tolerance tol;
  tol.required_matched_ratio = 0.99;
  EXPECT_TRUE(CompareOutputs(one_wild, expected, tol)->passed);
}

TEST(CompareTest, SizeMismatchIsInvalidArgument) {
  std::vector<float> x = {1.0f};
  std::vector<float> y = {1.0f, 2.0f};
  EXPECT_EQ(CompareOutputs(x, y).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CompareTest, Bf16BitsConvertExactly) {
  EXPECT_EQ(Bf16BitsToFloat(0x3f80), 1.0f);
  EXPECT_EQ(Bf16BitsToFloat(0xc000), -2.0f);
  EXPECT_TRUE(std::isnan(Bf16BitsToFloat(0x7fc0)));
}

}  // namespace
}  // namespace ptxbench::reference
