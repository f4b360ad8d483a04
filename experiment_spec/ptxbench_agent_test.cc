// PTXBench's coding-agent experiment.json (ptxbench_agent.cc): every field
// is read into the agent-mode experiment it means, ignored (the client says
// so), or refused with the field named.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "experiment_spec/spec_test_fixture.h"

namespace ptxbench::experiment_spec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class PtxbenchAgentTest : public SpecTest {
 protected:
  // The definition's first workload: PTXBench binds a run to one.
  static std::string Uuid() {
    return (*definitions_->Find("gemm_n7168_k5120"))->workloads.at(0).uuid;
  }
  // Shaped like PTXBench's Codex example: three runs over one workload, the
  // hub's tags, a token budget, the launcher's knobs.
  static Json Codex() {
    Json spec = {{"experiment_root", "runs/gpt56"},
                 {"profile_base_url", "http://127.0.0.1:10000"},
                 {"gateway_url", "http://127.0.0.1:8787"},
                 {"agent_image", "ptxbench-agent:latest"},
                 {"watch_interval", 0.2},
                 {"task_id", "gemm_n7168_k5120__m8192"},
                 {"definition", "gemm_n7168_k5120"},
                 {"workload_uuid", Uuid()},
                 {"language", "cuda"},
                 {"binding", "tvm-ffi"},
                 {"target_hardware", {"H100"}},
                 {"nvcc_gencode", "arch=compute_90a,code=sm_90a"},
                 {"target_speedup", 0},
                 {"prompt_hub", "examples/context/hub.json"},
                 {"prompt_files_root", "."},
                 {"agent", "codex"},
                 {"disable_web", true},
                 {"codex_use_mcp", false},
                 {"model", "gpt-5.6-sol"},
                 {"effort", "xhigh"},
                 {"token_budget", 500000},
                 {"max_turns", 20},
                 {"max_parallel", 3},
                 {"print_timeout", "24h"},
                 {"feedback_style", "multiturn"},
                 {"task_view", "multiturn"},
                 {"tool_start_grace", 30},
                 {"stream_stall_timeout", 600}};
    spec["runs"] = Json::array();
    for (const char* tag : {"hopper-no-hint", "hopper-03", "hopper-05"}) {
      spec["runs"].push_back({{"run_id", std::string("run-") + tag}, {"prompt_tag", tag}});
    }
    return spec;
  }
  // The hub's tags, as `ptxbench submit` brings them.
  static SpecInput Input(const Json& spec) {
    SpecInput input;
    input.text = spec.dump(2);
    input.path = "gpt56/experiment.json";
    input.prompts = {{"hopper-no-hint", "Write a fast kernel.\n\n"},
                     {"hopper-03", "Write a fast kernel.\n\nUse a persistent kernel.\n\n"},
                     {"hopper-05", "Write a fast kernel.\n\nSpecialize warps.\n\n"}};
    return input;
  }
  static absl::StatusOr<ExpandedExperiment> Expand(const SpecInput& input) {
    return ExpandSpec(input, *definitions_, *prompts_, {});
  }
  static absl::StatusOr<ExpandedExperiment> With(const std::string& key, Json value) {
    Json spec = Codex();
    spec[key] = std::move(value);
    return Expand(Input(spec));
  }
};

TEST_F(PtxbenchAgentTest, TheCodexExampleRunsEachRunAsOneSession) {
  absl::StatusOr<ExpandedExperiment> e = Expand(Input(Codex()));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->name, "gpt56");  // experiment.json takes its folder's name
  ASSERT_TRUE(e->agent.has_value());
  const AgentSettings& a = *e->agent;
  EXPECT_EQ(a.cli, "codex");
  EXPECT_EQ(a.effort, "xhigh");
  EXPECT_EQ(a.eval_interface, "command");  // codex_use_mcp false
  EXPECT_EQ(a.task_view, "multiturn");
  EXPECT_EQ(a.token_budget, 500000);
  EXPECT_EQ(a.max_evaluations, 20);
  EXPECT_EQ(a.max_parallel, 3);
  EXPECT_EQ(a.wall_time_s, 24 * 3600);
  EXPECT_EQ(a.stall_timeout_s, 600);
  EXPECT_EQ(a.budget_grace_s, 30);
  EXPECT_FALSE(a.show_budget);  // PTXBench's feedback text, unchanged
  EXPECT_EQ(e->eval_mode, v1::FULL);
  EXPECT_EQ(e->architectures, DefaultArchitectures());
  ASSERT_EQ(e->trajectories.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const TrajectorySpec& t = e->trajectories[i];
    EXPECT_EQ(t.model, "gpt-5.6-sol");
    EXPECT_EQ(t.definition, "gemm_n7168_k5120");
    EXPECT_THAT(t.workloads, ElementsAre(Uuid()));
    EXPECT_EQ(t.num_turns, 20);
    EXPECT_EQ(t.target_speedup, 0);  // correctness is the goal
    EXPECT_EQ(t.sample_index, static_cast<int32_t>(i));
  }
  EXPECT_EQ(e->trajectories[1].prompt_tag, "hopper-03");
  // The hub's texts came with the submission: they are what the agents read.
  EXPECT_EQ(e->submitted_prompts.at("hopper-05"), "Write a fast kernel.\n\nSpecialize warps.\n\n");
  const Json normalized = Json::parse(e->normalized_json);
  EXPECT_EQ(normalized["form"], "ptxbench-agent");
  EXPECT_EQ(normalized["runs"][2]["run_id"], "run-hopper-05");
  EXPECT_EQ(normalized["runs"][2]["trajectory"], e->trajectories[2].trajectory_id);
  // What ptxbench ignores does not change the experiment.
  Json moved = Codex();
  moved["experiment_root"] = "elsewhere";
  moved["watch_interval"] = 1;
  absl::StatusOr<ExpandedExperiment> same = Expand(Input(moved));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->spec_hash, e->spec_hash);
}

TEST_F(PtxbenchAgentTest, ARunsOwnSelectorsTurnsAndExtraTagAreItsOwn) {
  Json spec = Codex();
  for (const char* key : {"task_id", "definition", "workload_uuid", "max_turns"}) spec.erase(key);
  const std::string other = (*definitions_->Find("gemm_n7168_k5120"))->workloads.back().uuid;
  spec["runs"] = {{{"run_id", "a"}, {"prompt_tag", "hopper-no-hint"}, {"max_turns", 4},
                   {"task_id", "t"}, {"definition", "gemm_n7168_k5120"}, {"workload_uuid", other}},
                  {{"run_id", "b"}, {"prompt_tag", "hopper-no-hint"},
                   {"extra_user_prompt_tag", "hopper-05"}, {"task_id", "t"},
                   {"definition", "gemm_n7168_k5120"}, {"workload_uuid", Uuid()},
                   {"token_budget", 500000}}};
  SpecInput input = Input(spec);
  spec["tvm_ffi_example"] = "examples/wrapper.cu";
  input.text = spec.dump();
  input.files = {{"examples/wrapper.cu", "TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, Run);"}};
  absl::StatusOr<ExpandedExperiment> e = Expand(input);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->trajectories.size(), 2u);
  EXPECT_THAT(e->trajectories[0].workloads, ElementsAre(other));
  EXPECT_EQ(e->trajectories[0].num_turns, 4);
  EXPECT_EQ(e->trajectories[1].num_turns, 0);  // no limit anywhere: none
  EXPECT_EQ(e->trajectories[1].prompt_tag, "hopper-no-hint+hopper-05");
  // The tag, its extra tag, then the example, as PTXBench's knowledge pack.
  EXPECT_EQ(e->submitted_prompts.at("hopper-no-hint+hopper-05"),
            "Write a fast kernel.\n\nWrite a fast kernel.\n\nSpecialize warps.\n\n"
            "## Required TVM-FFI wrapper example\n\n```cpp\n"
            "TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, Run);\n```\n\n");
  EXPECT_THAT(e->submitted_prompts.at("hopper-no-hint"), HasSubstr("Required TVM-FFI"));
  // Another example is another experiment.
  input.files["examples/wrapper.cu"] = "// other";
  absl::StatusOr<ExpandedExperiment> other_example = Expand(input);
  ASSERT_TRUE(other_example.ok()) << other_example.status();
  EXPECT_NE(other_example->spec_hash, e->spec_hash);
}

TEST_F(PtxbenchAgentTest, AgyIsRefusedUnlessAnotherCliIsGivenWhichIsRecorded) {
  Json spec = Codex();
  spec["agent"] = "agy";
  spec["effort"] = "high";
  spec.erase("codex_use_mcp");
  ExpectInvalid(Expand(Input(spec)),
                "gpt56/experiment.json: $.agent: expected one of codex, claude-code, gemini-cli, "
                "found \"agy\"; Antigravity (agy) cannot be installed here; `submit --agent-cli "
                "gemini-cli` runs the experiment with Gemini CLI, recorded as a substitution");
  spec.erase("agent");  // PTXBench's default is agy too
  EXPECT_FALSE(Expand(Input(spec)).ok());
  SpecInput input = Input(spec);
  input.agent_cli = "gemini-cli";
  absl::StatusOr<ExpandedExperiment> e = Expand(input);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->agent->cli, "gemini-cli");
  EXPECT_EQ(e->agent->effort, "");  // Gemini CLI has no effort setting
  const Json normalized = Json::parse(e->normalized_json);
  EXPECT_EQ(normalized["substitution"],
            Json({{"agent", "agy"}, {"cli", "gemini-cli"}, {"effort_dropped", "high"}}));
  SpecInput matrix;
  matrix.text = Matrix().dump();
  matrix.path = "spec.json";
  matrix.agent_cli = "codex";
  EXPECT_THAT(std::string(Expand(matrix).status().message()), HasSubstr("no --agent-cli"));
  input.agent_cli = "antigravity";
  EXPECT_THAT(std::string(Expand(input).status().message()),
              HasSubstr("$.agent: expected one of codex, claude-code, gemini-cli, found "
                        "--agent-cli antigravity"));
}

TEST_F(PtxbenchAgentTest, WhatPtxbenchDoesNotOfferIsRefusedNamingTheField) {
  const std::string at = "gpt56/experiment.json: ";
  ExpectInvalid(With("disable_web", false),
                at + "$.disable_web: expected true, found false; a ptxbench agent never reaches "
                     "the web: its sandbox has only its loopback");
  EXPECT_THAT(std::string(With("codex_auth_file", "~/.codex/auth.json").status().message()),
              HasSubstr("$.codex_auth_file: expected no codex_auth_file"));
  EXPECT_THAT(std::string(With("workload_manifest", Json::object()).status().message()),
              HasSubstr("$.workload_manifest: expected no workload_manifest"));
  EXPECT_THAT(std::string(With("serviceTier", "flex").status().message()),
              HasSubstr("$.serviceTier: expected no serviceTier"));
  EXPECT_THAT(std::string(With("add_goal_command", true).status().message()),
              HasSubstr("$.add_goal_command: expected false, found true; goal mode"));
  EXPECT_THAT(std::string(With("language", "triton").status().message()),
              HasSubstr("$.language: expected one of \"cuda\""));
  EXPECT_THAT(std::string(With("binding", "torch").status().message()),
              HasSubstr("$.binding: expected one of \"tvm-ffi\""));
  EXPECT_THAT(std::string(With("nvcc_gencode", "arch=compute_100a,code=sm_100a").status().message()),
              HasSubstr("$.nvcc_gencode: expected one of"));
  EXPECT_THAT(std::string(With("target_hardware", {"B200"}).status().message()),
              HasSubstr("$.target_hardware[0]: expected one of \"H100\", \"H200\""));
  EXPECT_THAT(std::string(With("effort", "max").status().message()),
              HasSubstr("$.effort: expected one of"));
  EXPECT_THAT(std::string(With("print_timeout", "forever").status().message()),
              HasSubstr("$.print_timeout: expected a duration"));
  EXPECT_THAT(std::string(With("max_turns", 0).status().message()),
              HasSubstr("$.max_turns: expected an integer from 1"));
  EXPECT_THAT(std::string(With("feedback_style", "json").status().message()),
              HasSubstr("$.feedback_style: expected one of \"default\", \"multiturn\""));
  EXPECT_THAT(std::string(With("profile", 1).status().message()), HasSubstr("$.profile"));
  EXPECT_THAT(std::string(With("workload_uuid", "94920358-unknown").status().message()),
              HasSubstr("$.workload_uuid: expected a workload of gemm_n7168_k5120, found "
                        "\"94920358-unknown\"; a PTXBench dataset's workloads are there when "
                        "the scheduler loads it (ptxbench-scheduler --dataset DIR)"));
}

TEST_F(PtxbenchAgentTest, RunsAreReadStrictly) {
  Json spec = Codex();
  spec["runs"][1]["run_id"] = "run-hopper-no-hint";
  EXPECT_THAT(std::string(Expand(Input(spec)).status().message()),
              HasSubstr("$.runs[1].run_id: expected a run_id no other run has"));
  spec = Codex();
  spec["runs"][2]["token_budget"] = 200000;
  EXPECT_THAT(std::string(Expand(Input(spec)).status().message()),
              HasSubstr("$.runs[2].token_budget: expected 500000, found 200000; every run of one "
                        "experiment has the same token budget"));
  spec = Codex();
  spec["runs"][0]["definition"] = "gemm_n7168_k5120";  // one selector alone is not a binding
  EXPECT_THAT(std::string(Expand(Input(spec)).status().message()),
              HasSubstr("$.runs[0].task_id: expected a value"));
  spec = Codex();
  spec.erase("token_budget");
  EXPECT_THAT(std::string(Expand(Input(spec)).status().message()),
              HasSubstr("$.runs[0].token_budget: expected a token budget, here or at the top"));
  spec = Codex();
  spec["runs"][0]["prompt_tag"] = "hopper-99";
  EXPECT_THAT(std::string(Expand(Input(spec)).status().message()),
              HasSubstr("$.runs[0].prompt_tag: expected a known prompt tag"));
  spec = Codex();
  spec["runs"] = Json::array();
  EXPECT_THAT(std::string(Expand(Input(spec)).status().message()),
              HasSubstr("$.runs: expected a non-empty list of runs"));
  SpecInput input = Input(Codex());
  input.default_definition = "gemm_n7168_k5120";
  EXPECT_THAT(std::string(Expand(input).status().message()), HasSubstr("no --definition"));
}

}  // namespace
}  // namespace ptxbench::experiment_spec
