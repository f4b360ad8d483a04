// Agent mode in a spec ("mode": "agent" with an "agent" object): read
// strictly, with defaults, hashed, and each mode refusing the other's fields.

#include "experiment_spec/agent_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "experiment_spec/spec_test_fixture.h"

namespace ptxbench::experiment_spec {
namespace {

using ::testing::HasSubstr;

class AgentSpecTest : public SpecTest {
 protected:
  // The sample matrix in agent mode with Codex and a token budget.
  static Json AgentMatrix() {
    Json spec = Matrix();
    spec.erase("num_turns");
    spec["mode"] = "agent";
    spec["agent"] = {{"cli", "codex"}, {"cli_version", "0.171.0"}, {"token_budget", 500000}};
    return spec;
  }
  // Expands AgentMatrix() with agent.`key` = `value`.
  static absl::StatusOr<ExpandedExperiment> WithAgent(const std::string& key, Json value) {
    Json spec = AgentMatrix();
    spec["agent"][key] = std::move(value);
    return Expand(spec);
  }
};

TEST_F(AgentSpecTest, AMatrixInAgentModeExpandsWithTheDefaults) {
  absl::StatusOr<ExpandedExperiment> e = Expand(AgentMatrix());
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_TRUE(e->agent.has_value());
  EXPECT_EQ(e->trajectories.size(), 24u);
  const AgentSettings& a = *e->agent;
  EXPECT_EQ(a.cli, "codex");
  EXPECT_EQ(a.token_budget, 500000);
  EXPECT_EQ(a.eval_interface, "mcp");
  EXPECT_TRUE(a.shell);
  EXPECT_EQ(a.wall_time_s, 24 * 3600);
  EXPECT_EQ(a.stall_timeout_s, 600);
  EXPECT_EQ(a.eval_wait_timeout_s, 900);
  EXPECT_EQ(a.max_sessions, 3);
  EXPECT_TRUE(a.show_budget);
  // The whole agent object, defaults filled in, is part of the hash.
  const Json normalized = Json::parse(e->normalized_json);
  EXPECT_EQ(normalized["mode"], "agent");
  EXPECT_EQ(normalized["agent"]["token_budget"], 500000);
  EXPECT_EQ(normalized["agent"]["wall_time_s"], 86400);
  EXPECT_FALSE(normalized.contains("num_turns"));
  EXPECT_FALSE(normalized.contains("context_policy"));
  absl::StatusOr<ExpandedExperiment> more = WithAgent("token_budget", 500001);
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_NE(more->spec_hash, e->spec_hash);
}

TEST_F(AgentSpecTest, EveryKnobIsRead) {
  Json spec = AgentMatrix();
  spec["agent"] = {{"cli", "claude-code"},     {"cli_version", "2.1.332"},
                   {"eval_interface", "both"}, {"shell", false},
                   {"task_view", "multiturn"}, {"token_budget", 200000},
                   {"max_cost_usd", 12.5},     {"max_evaluations", 20},
                   {"max_model_calls", 300},   {"wall_time", "2h30m"},
                   {"stall_timeout", "5m"},    {"eval_wait_timeout", "20m"},
                   {"stop_at_target", true},   {"show_budget", false},
                   {"final_evaluation", "if-changed"}, {"toolchain", "cuda"},
                   {"max_sessions", 1}};
  absl::StatusOr<ExpandedExperiment> e = Expand(spec);
  ASSERT_TRUE(e.ok()) << e.status();
  const AgentSettings& a = *e->agent;
  EXPECT_EQ(a.cli, "claude-code");
  EXPECT_EQ(a.eval_interface, "both");
  EXPECT_FALSE(a.shell);
  EXPECT_EQ(a.task_view, "multiturn");
  EXPECT_DOUBLE_EQ(a.max_cost_usd, 12.5);
  EXPECT_EQ(a.max_evaluations, 20);
  EXPECT_EQ(a.max_model_calls, 300);
  EXPECT_EQ(a.wall_time_s, 9000);
  EXPECT_EQ(a.stall_timeout_s, 300);
  EXPECT_EQ(a.eval_wait_timeout_s, 1200);
  EXPECT_TRUE(a.stop_at_target);
  EXPECT_FALSE(a.show_budget);
  EXPECT_EQ(a.final_evaluation, "if-changed");
  EXPECT_EQ(a.toolchain, "cuda");
  EXPECT_EQ(a.max_sessions, 1);
  // A session's turns are its evaluations.
  EXPECT_EQ(e->trajectories[0].num_turns, 20);
}

TEST_F(AgentSpecTest, EachModeRefusesTheOthersFieldsNamingTheOneToUse) {
  Json turns = AgentMatrix();
  turns["num_turns"] = 5;
  ExpectInvalid(Expand(turns),
                "spec.json: $.num_turns: expected no num_turns in agent mode, found 5; a "
                "session's evaluations are limited by agent.max_evaluations");
  Json context = AgentMatrix();
  context["context_policy"] = "full";
  ExpectInvalid(Expand(context),
                "spec.json: $.context_policy: expected no context_policy in agent mode, found "
                "\"full\"; the agent CLI keeps its own context");
  Json no_agent = AgentMatrix();
  no_agent.erase("agent");
  ExpectInvalid(Expand(no_agent),
                "spec.json: $.agent: expected an object naming the CLI and its budgets (mode is "
                "agent), found nothing");
  Json multiturn = Matrix();
  multiturn["agent"] = {{"cli", "codex"}};
  ExpectInvalid(Expand(multiturn),
                "spec.json: $.agent: expected no agent object, found {\"cli\":\"codex\"}; it "
                "applies only with \"mode\": \"agent\"");
  Json mode = Matrix();
  mode["mode"] = "swarm";
  EXPECT_THAT(Expand(mode).status().message(), HasSubstr("$.mode: expected one of"));
}

// A matrix has no fix-it items for a session to start from.
TEST_F(AgentSpecTest, AMatrixCannotStartFromFixItKernels) {
  ExpectInvalid(WithAgent("starter", "fixit"),
                "spec.json: $.agent.starter: expected none, found \"fixit\"; a session starts "
                "from fix-it items' kernels, which only a list spec has");
  auto none = WithAgent("starter", "none");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(Json::parse(none->normalized_json)["agent"].contains("starter"))
      << "the default keeps older specs' hashes";
}

TEST_F(AgentSpecTest, OnlyPinnedClisAtTheirPinnedVersions) {
  ExpectInvalid(WithAgent("cli", "aider"),
                "spec.json: $.agent.cli: expected one of codex, claude-code, gemini-cli, found "
                "\"aider\"");
  EXPECT_THAT(WithAgent("cli", "agy").status().message(),
              HasSubstr("Antigravity (agy) cannot be installed here"));
  ExpectInvalid(WithAgent("cli_version", "0.149.1"),
                "spec.json: $.agent.cli_version: expected the version ptxbench pins for codex, "
                "\"0.171.0\", found \"0.149.1\"; each CLI runs at one pinned version, installed "
                "by scripts/setup.sh");
  ExpectInvalid(WithAgent("cli_version", "^0.171.0"),
                "spec.json: $.agent.cli_version: expected the version ptxbench pins for codex, "
                "\"0.171.0\", found \"^0.171.0\"; each CLI runs at one pinned version, installed "
                "by scripts/setup.sh");
}

TEST_F(AgentSpecTest, WhatACliCannotDoIsRefused) {
  ExpectInvalid(WithAgent("shell", false),
                "spec.json: $.agent.shell: expected true, found false; codex cannot run without "
                "its shell tool");
  absl::StatusOr<ExpandedExperiment> high = WithAgent("effort", "xhigh");
  ASSERT_TRUE(high.ok()) << high.status();
  EXPECT_EQ(high->agent->effort, "xhigh");
  Json claude = AgentMatrix();
  claude["agent"]["cli"] = "claude-code";
  claude["agent"]["cli_version"] = "2.1.332";
  claude["agent"]["effort"] = "high";
  ExpectInvalid(Expand(claude),
                "spec.json: $.agent.effort: expected no effort, found \"high\"; claude-code has "
                "no reasoning-effort setting");
}

TEST_F(AgentSpecTest, BudgetsAndDurationsAreChecked) {
  Json no_budget = AgentMatrix();
  no_budget["agent"].erase("token_budget");
  EXPECT_THAT(Expand(no_budget).status().message(),
              HasSubstr("$.agent.token_budget: expected"));
  EXPECT_THAT(WithAgent("token_budget", 0).status().message(),
              HasSubstr("$.agent.token_budget: expected an integer"));
  EXPECT_THAT(WithAgent("max_cost_usd", -1).status().message(),
              HasSubstr("$.agent.max_cost_usd: expected a number of at least 0"));
  EXPECT_THAT(WithAgent("max_evaluations", 1001).status().message(),
              HasSubstr("$.agent.max_evaluations: expected an integer"));
  EXPECT_THAT(WithAgent("wall_time", "forever").status().message(),
              HasSubstr("$.agent.wall_time: expected a duration such as"));
  EXPECT_THAT(WithAgent("wall_time", 3600).status().message(),
              HasSubstr("$.agent.wall_time: expected a duration such as"));
  EXPECT_THAT(WithAgent("eval_wait_timeout", "10s").status().message(),
              HasSubstr("$.agent.eval_wait_timeout: expected a duration"));
  // A stall timeout longer than the wall time could never fire.
  Json stall = AgentMatrix();
  stall["agent"]["wall_time"] = "10m";
  stall["agent"]["stall_timeout"] = "11m";
  EXPECT_THAT(Expand(stall).status().message(),
              HasSubstr("$.agent.stall_timeout: expected a duration"));
  EXPECT_THAT(WithAgent("stop_at_target", "yes").status().message(),
              HasSubstr("$.agent.stop_at_target: expected true or false"));
  EXPECT_THAT(WithAgent("starter", "fixit").status().message(),
              HasSubstr("$.agent.starter"));
}

TEST_F(AgentSpecTest, AMultiturnSpecKeepsItsHash) {
  // Specs written before agent mode hash as they did: "mode" appears in the
  // normalized form only for agent mode.
  absl::StatusOr<ExpandedExperiment> plain = Expand(Matrix());
  Json spelled = Matrix();
  spelled["mode"] = "multiturn";
  absl::StatusOr<ExpandedExperiment> explicit_mode = Expand(spelled);
  ASSERT_TRUE(plain.ok() && explicit_mode.ok());
  EXPECT_EQ(plain->spec_hash, explicit_mode->spec_hash);
  EXPECT_FALSE(plain->agent.has_value());
  EXPECT_EQ(Json::parse(plain->normalized_json).count("mode"), 0u);
}

}  // namespace
}  // namespace ptxbench::experiment_spec
