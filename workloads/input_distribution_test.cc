#include "workloads/input_distribution.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace ptxbench::workloads {
namespace {

TEST(InputDistributionTest, NamesRoundTrip) {
  for (InputDistribution d : AllInputDistributions()) {
    EXPECT_EQ(ParseInputDistribution(InputDistributionName(d)), d);
  }
  EXPECT_EQ(ParseInputDistribution("uniform"), std::nullopt);
  EXPECT_EQ(DescribeInputDistributions(AllInputDistributions()),
            "normal, outliers, scaled_1e-3, scaled_64");
}

// Every distribution of the list is drawn, about evenly, and always the same
// one for the same seed: a call and its check agree, and a run of timed
// calls (150 in three trials) meets each of them.
TEST(InputDistributionTest, CallsDrawEveryDistributionOfTheListBySeed) {
  const std::vector<InputDistribution> all = AllInputDistributions();
  std::map<InputDistribution, int> drawn;
  for (uint64_t seed = 0; seed < 4000; ++seed) {
    const InputDistribution d = DistributionForCall(seed * 0x9E3779B97F4A7C15ull, all);
    EXPECT_EQ(d, DistributionForCall(seed * 0x9E3779B97F4A7C15ull, all));
    ++drawn[d];
  }
  ASSERT_EQ(drawn.size(), all.size());
  for (const auto& [d, n] : drawn) EXPECT_NEAR(n, 1000, 150) << InputDistributionName(d);
  // A list of one, and none (normal).
  EXPECT_EQ(DistributionForCall(7, {InputDistribution::kScaledUp}), InputDistribution::kScaledUp);
  EXPECT_EQ(DistributionForCall(7, {}), InputDistribution::kNormal);
}

TEST(InputDistributionTest, ScalingsAreTheDocumentedOnes) {
  EXPECT_EQ(ScalingOf(InputDistribution::kNormal).factor, 1.0f);
  EXPECT_EQ(ScalingOf(InputDistribution::kOutliers).factor, 64.0f);
  EXPECT_EQ(ScalingOf(InputDistribution::kOutliers).one_in, 1024);
  EXPECT_EQ(ScalingOf(InputDistribution::kScaledDown).factor, 1e-3f);
  EXPECT_EQ(ScalingOf(InputDistribution::kScaledUp).factor, 64.0f);
  EXPECT_EQ(ScalingOf(InputDistribution::kScaledUp).one_in, 1);
}

}  // namespace
}  // namespace ptxbench::workloads
