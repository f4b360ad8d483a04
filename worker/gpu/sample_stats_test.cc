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

}  // namespace
}  // namespace ptxbench::gpu
