#include "workloads/reference/philox.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ptxbench::reference {
namespace {

// Known-answer vectors of Random123's kat_vectors for philox4x32 with 10 rounds.
TEST(PhiloxTest, MatchesRandom123KnownAnswers) {
  Philox4 zero = Philox4x32_10(Philox4{{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(zero.v[0], 0x6627e8d5u);
  EXPECT_EQ(zero.v[1], 0xe169c58du);
  EXPECT_EQ(zero.v[2], 0xbc57ac4cu);
  EXPECT_EQ(zero.v[3], 0x9b00dbd8u);
  Philox4 ones = Philox4x32_10(Philox4{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                               0xffffffffu, 0xffffffffu);
  EXPECT_EQ(ones.v[0], 0x408f276du);
  EXPECT_EQ(ones.v[1], 0x41c83b0eu);
  EXPECT_EQ(ones.v[2], 0xa20bc7c6u);
  EXPECT_EQ(ones.v[3], 0x6d5451fdu);
  Philox4 pi = Philox4x32_10(Philox4{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                             0xa4093822u, 0x299f31d0u);
  EXPECT_EQ(pi.v[0], 0xd16cfe09u);
  EXPECT_EQ(pi.v[1], 0x94fdccebu);
  EXPECT_EQ(pi.v[2], 0x5001e420u);
  EXPECT_EQ(pi.v[3], 0x24126ea1u);
}

TEST(PhiloxTest, NormalsHaveUnitMomentsAndDependOnSeed) {
  double sum = 0, sq = 0;
  const int groups = 100000;
  for (int g = 0; g < groups; ++g) {
    float z[4];
    StandardNormal4(42, g, z);
    for (float v : z) {
      ASSERT_TRUE(std::isfinite(v));
      sum += v;
      sq += static_cast<double>(v) * v;
    }
  }
  const double n = 4.0 * groups;
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.01);
  float a[4], b[4];
  StandardNormal4(1, 7, a);
  StandardNormal4(2, 7, b);
  EXPECT_NE(a[0], b[0]);
}

}  // namespace
}  // namespace ptxbench::reference
