#include "cli/commands/args.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ArgsTest : public ::testing::Test {
 protected:
  ArgsTest()
      : commands_({
            {"submit",
             "SPEC.json",
             1,
             1,
             {{"name", true, false, "N", ""}, {"dry-run", false, false, "", ""}},
             "submit",
             ""},
            {"status", "[EXP]", 0, 1, {{"watch", false, false, "", ""}}, "status", ""},
            {"definitions", "", 0, 0, {{"dataset", true, true, "DIR", ""}}, "defs", ""},
            {"definitions import", "SUITE DIR", 2, 2, {{"out", true, false, "DIR", ""}}, "imp", ""},
            {"prompts check", "", 0, 0, {}, "check", ""},
            {"prompts render", "TAG", 1, 1, {{"language", true, false, "L", ""}}, "render", ""},
        }),
        globals_({{"scheduler", true, false, "HOST:PORT", ""}, {"output", true, false, "F", ""}}) {}

  absl::StatusOr<ParsedArgs> Parse(std::vector<std::string> args) {
    return ParseArgs(args, commands_, globals_);
  }

  std::vector<CommandSpec> commands_;
  std::vector<FlagSpec> globals_;
};

TEST_F(ArgsTest, CommandFlagsAndPositionals) {
  absl::StatusOr<ParsedArgs> parsed = Parse({"submit", "spec.json", "--name", "n1", "--dry-run"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->command->name, "submit");
  EXPECT_THAT(parsed->positionals, ElementsAre("spec.json"));
  EXPECT_EQ(parsed->Get("name"), "n1");
  EXPECT_TRUE(parsed->Has("dry-run"));
  EXPECT_FALSE(parsed->Has("scheduler"));
  EXPECT_EQ(parsed->Get("scheduler", "fallback"), "fallback");
}

TEST_F(ArgsTest, EqualsFormAndGlobalFlagsBeforeOrAfterCommand) {
  absl::StatusOr<ParsedArgs> parsed =
      Parse({"--scheduler=h:1", "status", "exp_1", "--output", "json", "--watch"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->command->name, "status");
  EXPECT_EQ(parsed->Get("scheduler"), "h:1");
  EXPECT_EQ(parsed->Get("output"), "json");
  EXPECT_THAT(parsed->positionals, ElementsAre("exp_1"));

  parsed = Parse({"status", "--scheduler=a=b:2"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->Get("scheduler"), "a=b:2");  // split at the first '='
}

TEST_F(ArgsTest, ACommandThatIsAlsoAGroupTakesItsMemberWord) {
  absl::StatusOr<ParsedArgs> parsed =
      Parse({"definitions", "import", "kernelbench", "kb", "--out", "o"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->command->name, "definitions import");
  EXPECT_THAT(parsed->positionals, ElementsAre("kernelbench", "kb"));
  EXPECT_EQ(parsed->Get("out"), "o");
  // Alone, the word is the command itself.
  parsed = Parse({"definitions", "--dataset", "d"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->command->name, "definitions");
}

TEST_F(ArgsTest, RepeatableFlagKeepsAllLastWinsOtherwise) {
  absl::StatusOr<ParsedArgs> parsed =
      Parse({"definitions", "--dataset", "a", "--dataset=b", "--output", "table", "--output=json"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->GetAll("dataset"), ElementsAre("a", "b"));
  EXPECT_EQ(parsed->Get("output"), "json");
}

TEST_F(ArgsTest, UnknownFlagIsUsageErrorNamingIt) {
  absl::StatusOr<ParsedArgs> parsed = Parse({"submit", "x.json", "--bogus", "1"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(IsUsageError(parsed.status()));
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("unknown flag --bogus for 'ptxbench submit'"));

  // A command's flag is unknown to another command.
  parsed = Parse({"status", "--name=x"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("--name"));
  parsed = Parse({"status", "-x"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(IsUsageError(parsed.status()));
}

TEST_F(ArgsTest, ValueProblemsAreUsageErrors) {
  absl::StatusOr<ParsedArgs> parsed = Parse({"submit", "x.json", "--name"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("--name needs a value"));
  parsed = Parse({"status", "--watch=yes"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("--watch takes no value"));
}

TEST_F(ArgsTest, PositionalCounts) {
  absl::StatusOr<ParsedArgs> parsed = Parse({"submit"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(IsUsageError(parsed.status()));
  EXPECT_THAT(parsed.status().message(), HasSubstr("needs SPEC.json"));
  parsed = Parse({"status", "a", "b"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("unexpected argument 'b'"));
}

TEST_F(ArgsTest, DoubleDashEndsFlags) {
  absl::StatusOr<ParsedArgs> parsed = Parse({"submit", "--", "--weird-name.json"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->positionals, ElementsAre("--weird-name.json"));
}

TEST_F(ArgsTest, UnknownCommand) {
  absl::StatusOr<ParsedArgs> parsed = Parse({"frobnicate"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(IsUsageError(parsed.status()));
  EXPECT_THAT(parsed.status().message(), HasSubstr("unknown command 'frobnicate'"));
}

TEST_F(ArgsTest, GroupCommands) {
  absl::StatusOr<ParsedArgs> parsed = Parse({"prompts", "render", "tag1", "--language=ptx"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->command->name, "prompts render");
  EXPECT_THAT(parsed->positionals, ElementsAre("tag1"));
  EXPECT_EQ(parsed->Get("language"), "ptx");

  parsed = Parse({"prompts"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("needs a subcommand: check, render"));
  parsed = Parse({"prompts", "lint"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("unknown command 'ptxbench prompts lint'"));
}

TEST_F(ArgsTest, HelpSkipsChecks) {
  absl::StatusOr<ParsedArgs> parsed = Parse({"submit", "--help"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->help);
  EXPECT_EQ(parsed->command->name, "submit");
  parsed = Parse({"prompts", "-h"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->command, nullptr);
  EXPECT_EQ(parsed->help_group, "prompts");
  EXPECT_THAT(GroupUsage("prompts", commands_), HasSubstr("prompts render"));
  EXPECT_THAT(CommandUsage(commands_[0], globals_), HasSubstr("usage: ptxbench submit SPEC.json"));
}

TEST(ParseFlagValueTest, IntegersAndSeconds) {
  EXPECT_EQ(*ParseIntFlag("limit", "5", 1, 10), 5);
  absl::StatusOr<int64_t> bad = ParseIntFlag("limit", "0", 1, 10);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(IsUsageError(bad.status()));
  EXPECT_FALSE(ParseIntFlag("limit", "five", 1, 10).ok());
  EXPECT_DOUBLE_EQ(*ParsePositiveSeconds("timeout", "0.5"), 0.5);
  EXPECT_FALSE(ParsePositiveSeconds("timeout", "-1").ok());
  EXPECT_FALSE(ParsePositiveSeconds("timeout", "nan").ok());
}

TEST(UsageErrorTest, DistinctFromPlainInvalidArgument) {
  EXPECT_TRUE(IsUsageError(UsageError("x")));
  EXPECT_FALSE(IsUsageError(absl::InvalidArgumentError("x")));
  EXPECT_FALSE(IsUsageError(absl::OkStatus()));
}

}  // namespace
}  // namespace ptxbench::cli
