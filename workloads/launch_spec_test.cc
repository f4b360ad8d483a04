#include "workloads/launch_spec.h"

#include <gtest/gtest.h>

namespace ptxbench::workloads {
namespace {

const std::map<std::string, int64_t> kAxes = {{"M", 70}, {"N", 7168}, {"K", 5120}};

TEST(LaunchExpression, ArithmeticOverAxes) {
  EXPECT_EQ(*EvaluateExpression("(N + 127) / 128", kAxes), 56);
  EXPECT_EQ(*EvaluateExpression("(M + 127) / 128", kAxes), 1);
  EXPECT_EQ(*EvaluateExpression("2 * 64 * 1024", kAxes), 131072);
  EXPECT_EQ(*EvaluateExpression("M % 64 - -3", kAxes), 9);
  EXPECT_EQ(*EvaluateExpression("  K  ", kAxes), 5120);
}

TEST(LaunchExpression, ErrorsNameTheProblem) {
  EXPECT_NE(EvaluateExpression("M / (N - 7168)", kAxes).status().message().find("division by zero"),
            std::string::npos);
  EXPECT_NE(EvaluateExpression("S * 2", kAxes).status().message().find("unknown axis 'S'"),
            std::string::npos);
  EXPECT_FALSE(EvaluateExpression("(M + 1", kAxes).ok());
  EXPECT_FALSE(EvaluateExpression("M +", kAxes).ok());
  EXPECT_FALSE(EvaluateExpression("M ** 2", kAxes).ok());
  EXPECT_FALSE(EvaluateExpression("99999999999 * 99999999999", kAxes).ok());
}

TEST(LaunchSpecTest, ParsesNumbersAndExpressionsAndResolves) {
  absl::StatusOr<LaunchSpec> spec = ParseLaunchSpec(
      R"({"entry": "gemm", "grid": ["(N + 127) / 128", "(M + 127) / 128"], "block": [384],
          "shared_mem_bytes": "2 * 64 * 1024"})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->entry, "gemm");
  absl::StatusOr<LaunchConfig> c = Resolve(*spec, kAxes);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->grid, (std::array<int64_t, 3>{56, 1, 1}));
  EXPECT_EQ(c->block, (std::array<int64_t, 3>{384, 1, 1}));
  EXPECT_EQ(c->shared_mem_bytes, 131072);
  // Round trip through the one-line form carried in the PTX text.
  absl::StatusOr<LaunchSpec> back = ParseLaunchSpec(LaunchSpecJson(*spec));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->grid, spec->grid);
}

TEST(LaunchSpecTest, RejectsBadSpecs) {
  EXPECT_FALSE(ParseLaunchSpec("[]").ok());
  EXPECT_FALSE(ParseLaunchSpec(R"({"grid": [1], "block": [1]})").ok());  // no entry
  EXPECT_FALSE(ParseLaunchSpec(R"({"entry": "k", "grid": [], "block": [1]})").ok());
  EXPECT_FALSE(ParseLaunchSpec(R"({"entry": "k", "grid": [1], "block": [1], "smem": 0})").ok());
  auto spec = ParseLaunchSpec(R"({"entry": "k", "grid": ["M - 70"], "block": [2048]})");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(Resolve(*spec, kAxes).ok());  // grid 0
  spec = ParseLaunchSpec(R"({"entry": "k", "grid": [1], "block": [2048]})");
  EXPECT_NE(Resolve(*spec, kAxes).status().message().find("must be 1 to 1024"), std::string::npos);
  spec = ParseLaunchSpec(R"({"entry": "k", "grid": [1], "block": [1], "shared_mem_bytes": 300000})");
  EXPECT_FALSE(Resolve(*spec, kAxes).ok());
}

TEST(LaunchSpecTest, FoundInThePtxText) {
  EXPECT_FALSE(FindLaunchSpecJson(".version 8.0\n.target sm_90a\n").has_value());
  auto json = FindLaunchSpecJson(".version 8.0\n// ptxbench-launch: {\"entry\": \"k\"}\n");
  ASSERT_TRUE(json.has_value());
  EXPECT_EQ(*json, "{\"entry\": \"k\"}");
}

TEST(LaunchSpecTest, SpecLineIsAppendedOnOneLine) {
  const std::string ptx = WithLaunchSpecLine(".version 8.0", "{\"entry\": \"k\",\n \"grid\": [1]}");
  EXPECT_EQ(ptx, ".version 8.0\n// ptxbench-launch: {\"entry\":\"k\",\"grid\":[1]}\n");
  EXPECT_EQ(*FindLaunchSpecJson(ptx), "{\"entry\":\"k\",\"grid\":[1]}");
}

TEST(LaunchSpecTest, BuildTimeCheckNamesWhatIsWrong) {
  Definition d;
  d.axes = {{"M", false, 0}, {"N", true, 7168}};
  Workload w;
  w.uuid = "w1";
  w.axes = {{"M", 70}};
  d.workloads = {w};
  const std::string good = WithLaunchSpecLine(
      ".entry k()", R"({"entry": "k", "grid": ["(N + 127) / 128", "(M + 127) / 128"], "block": [128]})");
  EXPECT_TRUE(CheckLaunchSpec(good, d, {"k"}).ok());
  EXPECT_NE(CheckLaunchSpec(".entry k()", d, {"k"}).message().find("no launch spec"),
            std::string::npos);
  EXPECT_NE(CheckLaunchSpec(good, d, {"other"}).message().find("no .entry \"k\""),
            std::string::npos);
  const std::string zero = WithLaunchSpecLine(".entry k()", R"({"entry": "k", "grid": ["M - 70"], "block": [1]})");
  EXPECT_NE(CheckLaunchSpec(zero, d, {"k"}).message().find("at workload w1"), std::string::npos);
}

TEST(LaunchSpecTest, HostileExpressionsGetOneClearError) {
  const std::map<std::string, int64_t> axes = {{"M", 70}};
  // INT64_MIN / -1 would trap; deep nesting would exhaust the stack.
  EXPECT_NE(EvaluateExpression("(0 - 9223372036854775807 - 1) / -1", axes).status().message().find(
                "overflow"),
            std::string::npos);
  EXPECT_NE(EvaluateExpression(std::string(100000, '(') + "1" + std::string(100000, ')'), axes)
                .status()
                .message()
                .find("characters"),
            std::string::npos);
  EXPECT_NE(EvaluateExpression(std::string(200, '(') + "1" + std::string(200, ')'), axes)
                .status()
                .message()
                .find("nested too deeply"),
            std::string::npos);
  EXPECT_NE(EvaluateExpression(std::string(300, '-') + "1", axes).status().message().find(
                "nested too deeply"),
            std::string::npos);
  LaunchSpec spec;
  spec.entry = "k";
  spec.grid = {"1", "1", "1"};
  spec.block = {"4294967296", "4294967296", "1"};  // would overflow the thread count
  EXPECT_NE(Resolve(spec, axes).status().message().find("must be 1 to 1024"), std::string::npos);
  spec.block = {"1", "1", "1"};
  spec.grid = {"1", "70000", "1"};
  EXPECT_NE(Resolve(spec, axes).status().message().find("must be 1 to 65535"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::workloads
