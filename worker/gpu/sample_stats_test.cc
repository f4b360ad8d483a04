#include "worker/gpu/sample_stats.h"

#include <gtest/gtest.h>

namespace ptxbench::gpu {
namespace {

TEST(SampleStatsTest, EmptyIsAllZero) {
  SampleStats s = Summarize({});
  EXPECT_EQ(s.count, 0);
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(s.cv, 0);
}

TEST(SampleStatsTest, OddCountMedianIsMiddleSample) {
  SampleStats s = Summarize({5.0, 1.0, 3.0});
  EXPECT_EQ(s.count, 3);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
  EXPECT_DOUBLE_EQ(s.stdev, 2.0);  // sqrt((4 + 0 + 4) / 2)
  EXPECT_DOUBLE_EQ(s.cv, 2.0 / 3.0);
}

TEST(SampleStatsTest, EvenCountMedianAveragesMiddlePair) {
  SampleStats s = Summarize({4.0, 1.0, 2.0, 100.0});
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.mean, 26.75);
}

TEST(SampleStatsTest, ConstantSamplesHaveZeroSpread) {
  SampleStats s = Summarize({2.5, 2.5, 2.5});
  EXPECT_DOUBLE_EQ(s.stdev, 0.0);
  EXPECT_DOUBLE_EQ(s.cv, 0.0);
}

// n samples about `center`, spread evenly over +-`jitter`.
std::vector<double> Around(double center, double jitter, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center + jitter * (2.0 * i / (n - 1) - 1));
  return v;
}

TEST(SampleModesTest, OneGroupIsOneMode) {
  EXPECT_TRUE(Modes({}).empty());
  std::vector<SampleMode> m = Modes(Around(0.030, 0.0003, 50));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NEAR(m[0].median, 0.030, 1e-9);
  EXPECT_DOUBLE_EQ(m[0].share, 1.0);
  // Evenly spread from 20 to 30 us: no gap stands out.
  EXPECT_EQ(Modes(Around(0.025, 0.005, 50)).size(), 1u);
  // Three outliers of fifty are not a mode.
  std::vector<double> outliers = Around(0.030, 0.0003, 47);
  for (double x : {0.045, 0.046, 0.047}) outliers.push_back(x);
  EXPECT_EQ(Modes(outliers).size(), 1u);
}

TEST(SampleModesTest, TwoGroupsApartAreTwoModes) {
  // The short-kernel case: per-call times 9 us apart.
  std::vector<double> v = Around(0.030, 0.0003, 30);
  for (double x : Around(0.021, 0.0002, 20)) v.push_back(x);
  std::vector<SampleMode> m = Modes(v);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NEAR(m[0].median, 0.021, 1e-9);
  EXPECT_DOUBLE_EQ(m[0].share, 0.4);
  EXPECT_NEAR(m[1].median, 0.030, 1e-9);
  EXPECT_DOUBLE_EQ(m[1].share, 0.6);
  EXPECT_EQ(DescribeTrial(v),
            "median 0.0298 ms (min 0.0208, max 0.0303, cv 16.88%); two modes: 0.0210 ms (40%), "
            "0.0300 ms (60%)");
  EXPECT_EQ(DescribeTrial(Around(0.030, 0.0003, 50)),
            "median 0.0300 ms (min 0.0297, max 0.0303, cv 0.59%)");
}

}  // namespace
}  // namespace ptxbench::gpu
