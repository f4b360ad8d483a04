#include "executor/command_line.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, cl_test_slots, 1, "test flag");
ABSL_FLAG(bool, cl_test_simulate, false, "test flag");
ABSL_FLAG(std::string, cl_test_name, "", "test flag");
ABSL_FLAG(int, cl_test_latency_ms, 0, "test flag");

// Suite names start with "executor_" so that `ctest -R executor` selects them.
namespace ptxbench::executor {
namespace {

using ::testing::HasSubstr;

absl::Status Check(std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return CheckCommandLine(static_cast<int>(argv.size()), argv.data());
}

TEST(executor_command_line, AcceptsKnownFlagsInEveryForm) {
  EXPECT_TRUE(Check({"--cl_test_slots=3", "--cl_test_name", "a b", "--cl_test_simulate"}).ok());
  EXPECT_TRUE(Check({"-cl_test_slots", "4", "--nocl_test_simulate"}).ok());
  EXPECT_TRUE(Check({"--cl_test_simulate=false", "--help"}).ok());
  EXPECT_TRUE(Check({"--cl_test_slots=2", "--"}).ok());
}

TEST(executor_command_line, FlagNamesMayUseDashes) {
  EXPECT_TRUE(Check({"--cl-test-latency-ms=5", "--cl-test-name", "my-host"}).ok());
  EXPECT_TRUE(Check({"--cl-test-latency-ms", "-5", "--nocl-test-simulate"}).ok());
  EXPECT_EQ(Check({"--cl-test-bogus"}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(executor_command_line, RejectsUnknownFlags) {
  absl::Status s = Check({"--cl_test_slots=3", "--bogus=1"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("unknown flag --bogus"));
  EXPECT_EQ(Check({"--nocl_test_slots"}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(executor_command_line, RejectsBadAndMissingValues) {
  absl::Status bad = Check({"--cl_test_slots=many"});
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("bad value 'many' for flag --cl_test_slots"));
  absl::Status missing = Check({"--cl_test_slots"});
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("missing value"));
}

TEST(executor_command_line, RejectsPositionalArguments) {
  EXPECT_EQ(Check({"stray"}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Check({"--", "stray"}).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ptxbench::executor
