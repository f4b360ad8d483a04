#include "common/gpu_arch.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(GpuArchTest, FamiliesAndNamesBecomeSortedDistinctArchitectures) {
  EXPECT_THAT(*ParseArchitectures({"hopper"}), ElementsAre("sm_90"));
  EXPECT_THAT(*ParseArchitectures({"Blackwell", "sm_90a", "hopper"}),
              ElementsAre("sm_100", "sm_103", "sm_90"));
  EXPECT_THAT(*ParseArchitectures({"sm_120"}), ElementsAre("sm_120"));
  EXPECT_EQ(DefaultArchitectures(), *ParseArchitectures({"hopper"}));
}

TEST(GpuArchTest, UnknownNamesAreRefusedByName) {
  for (const char* bad : {"volta2", "sm_9", "sm_", "sm_1000", "sm_61", "gfx90a", "sm_x0", ""}) {
    absl::StatusOr<std::vector<std::string>> parsed = ParseArchitectures({"hopper", bad});
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr(absl::StrCat("'", bad, "'")));
  }
  EXPECT_FALSE(ParseArchitectures({}).ok());
}

TEST(GpuArchTest, ArchitectureSpecificTargetsFromHopperOn) {
  EXPECT_EQ(CompileTarget("sm_90"), "sm_90a");
  EXPECT_EQ(CompileTarget("sm_100"), "sm_100a");
  EXPECT_EQ(CompileTarget("sm_89"), "sm_89");
  EXPECT_EQ(CompileTarget("sm_80"), "sm_80");
  for (const char* ok : {"sm_90a", "sm_100a", "sm_89", "sm_80"}) EXPECT_TRUE(IsCompileTarget(ok)) << ok;
  for (const char* bad : {"sm_90", "sm_89a", "sm_9a", "", "-o x", "compute_90a"}) {
    EXPECT_FALSE(IsCompileTarget(bad)) << bad;
  }
}

TEST(GpuArchTest, Descriptions) {
  EXPECT_EQ(DescribeArchitecture("sm_90"), "sm_90 (Hopper)");
  EXPECT_EQ(DescribeArchitecture("sm_103"), "sm_103 (Blackwell)");
  EXPECT_EQ(DescribeArchitecture("sm_120"), "sm_120");
  EXPECT_TRUE(TargetsArchitecture({"sm_100", "sm_90"}, "sm_90"));
  EXPECT_FALSE(TargetsArchitecture({"sm_100"}, "sm_90"));
}

}  // namespace
}  // namespace ptxbench
