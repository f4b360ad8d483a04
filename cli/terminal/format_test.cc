#include "cli/terminal/format.h"

#include "gtest/gtest.h"

namespace ptxbench::cli {
namespace {

TEST(ProgressBarTest, FillsInProportion) {
  EXPECT_EQ(ProgressBar(0, 10, 10), "[----------]");
  EXPECT_EQ(ProgressBar(3, 10, 10), "[###-------]");
  EXPECT_EQ(ProgressBar(10, 10, 10), "[##########]");
  EXPECT_EQ(ProgressBar(1, 3, 4), "[#---]");
  EXPECT_EQ(ProgressBar(5, 0, 4), "[----]");    // nothing to do yet
  EXPECT_EQ(ProgressBar(12, 10, 4), "[####]");  // clamped
  EXPECT_EQ(Fraction(12, 40), "12/40 (30%)");
  EXPECT_EQ(Fraction(0, 0), "0/0 (0%)");
}

TEST(ExcerptTest, CutsLinesAndColumns) {
  EXPECT_EQ(Excerpt("a\nb\nc\nd\n", 2, 80), "a\nb\n... (2 more lines)\n");
  EXPECT_EQ(Excerpt("a\nb", 5, 80), "a\nb\n");
  EXPECT_EQ(Excerpt("abcdefghij", 1, 6), "abc...\n");
  EXPECT_EQ(OneLine("x\ny", 10), "x y");
  EXPECT_EQ(Indent("a\n\nb\n", "  "), "  a\n\n  b\n");
  EXPECT_EQ(Indent("", "  "), "");
}

TEST(FormatTest, ReferencesAndTimes) {
  EXPECT_EQ(ReferenceLabel("cuBLAS"), " (cuBLAS)");
  EXPECT_EQ(ReferenceLabel(""), "");
  const absl::Time now = absl::FromUnixSeconds(1000000);
  EXPECT_EQ(FormatAge(0, now), "never");
  EXPECT_EQ(FormatAge((1000000 - 5) * 1000LL, now), "5s ago");
  EXPECT_EQ(FormatAge((1000000 - 600) * 1000LL, now), "10m ago");
  EXPECT_EQ(FormatAge((1000000 - 3 * 86400) * 1000LL, now), "3d ago");
  EXPECT_EQ(FormatUnixMs(0), "-");
}

}  // namespace
}  // namespace ptxbench::cli
