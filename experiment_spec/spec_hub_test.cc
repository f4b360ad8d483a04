// Specs naming the tags of a PTXBench prompt hub (prompts/prompts.h): with
// the hub, without it, and with the texts a submission brings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "prompts/prompts.h"
#include "prompts/testing/hub_dir_test.h"
#include "experiment_spec/spec.h"
#include "workloads/registry.h"

namespace ptxbench::experiment_spec {
namespace {

using ::testing::HasSubstr;

using SpecHubTest = ::ptxbench::prompts::HubDirTest;

// A PTXBench config naming several of its hub's tags runs unchanged once the
// scheduler has the hub, and is refused without it.
TEST_F(SpecHubTest, AConfigWithManyHubTagsExpands) {
  Write("hub/hub.json",
        R"({"hopper-no-hint": ["d/k.md"], "hopper-05": ["hopper-no-hint", "d/ws.md"],
                           "hopper-07": ["hopper-no-hint", "d/fa3.md"]})");
  for (const char* doc : {"hub/d/k.md", "hub/d/ws.md", "hub/d/fa3.md"}) Write(doc, "x");
  SpecInput input;
  input.text = R"([
    {"num_trajectories": 1, "num_turns": 3, "target_speedup": 1.0, "prompt_tag": "hopper-no-hint"},
    {"num_trajectories": 2, "num_turns": 3, "target_speedup": 1.0, "prompt_tag": "hopper-05"},
    {"num_trajectories": 1, "num_turns": 3, "target_speedup": 1.0, "prompt_tag": "hopper-07"}])";
  input.path = "sweep.json";
  input.default_definition = "gemm_n7168_k5120";
  input.default_model = "gpt-5";
  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok()) << definitions.status();
  auto with_hub = Load("hub");
  ASSERT_TRUE(with_hub.ok()) << with_hub.status();
  auto e = ExpandSpec(input, **definitions, **with_hub, {});
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->trajectories.size(), 4u);
  EXPECT_EQ(e->trajectories[0].prompt_tag, "hopper-no-hint");
  EXPECT_EQ(e->trajectories[2].prompt_tag, "hopper-05");
  EXPECT_EQ(e->trajectories[3].prompt_tag, "hopper-07");

  auto bundled = PromptRegistry::Load(PromptRegistry::BundledRoot());
  ASSERT_TRUE(bundled.ok());
  auto refused = ExpandSpec(input, **definitions, **bundled, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("sweep.json: $[0].prompt_tag: expected a known prompt tag, found "
                        "\"hopper-no-hint\""));
  EXPECT_THAT(refused.status().message(), HasSubstr("a PTXBench tag needs its hub"));
}

// `submit --prompts HUB`: the client brings the texts of the hub's tags its
// spec names; a scheduler without the hub runs them, each followed by its own
// ABI description, and the texts are part of the spec's identity.
TEST_F(SpecHubTest, ASubmissionBringsItsHubsTags) {
  Write("hub/hub.json",
        R"({"hopper-no-hint": ["d/k.md"], "hopper-05": ["hopper-no-hint", "d/ws.md"]})");
  Write("hub/d/k.md", "KNOWLEDGE");
  Write("hub/d/ws.md", "WARP SPECIALIZATION");
  auto client_side = Load("hub");
  ASSERT_TRUE(client_side.ok()) << client_side.status();
  EXPECT_TRUE((*client_side)->IsHubTag("hopper-05"));
  EXPECT_FALSE((*client_side)->IsHubTag("ptxb-no-hint"));
  SpecInput input;
  input.text = R"({"name": "brought", "models": ["m"], "definitions": ["gemm_n7168_k5120"],
                   "prompt_tags": ["hopper-05", "ptxb-basic"], "samples": 1, "num_turns": 1,
                   "target_speedup": 1.0})";
  input.path = "spec.json";
  input.prompts["hopper-05"] = *(*client_side)->TagText("hopper-05");
  input.prompts["unused-tag"] = "not named by the spec";

  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok()) << definitions.status();
  auto scheduler_side = PromptRegistry::Load(PromptRegistry::BundledRoot());  // no hub
  ASSERT_TRUE(scheduler_side.ok());
  auto e = ExpandSpec(input, **definitions, **scheduler_side, {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->submitted_prompts,
            (std::map<std::string, std::string>{{"hopper-05", input.prompts["hopper-05"]}}));
  // Rendered as the scheduler with the hub would render it.
  EXPECT_EQ(*(*scheduler_side)->WithAbi(e->submitted_prompts["hopper-05"], "cuda"),
            *(*client_side)->RenderSystemPrompt("hopper-05", "cuda"));
  // Another text for the tag is another spec.
  SpecInput other = input;
  other.prompts["hopper-05"] = "KNOWLEDGE v2\n\n";
  auto e2 = ExpandSpec(other, **definitions, **scheduler_side, {});
  ASSERT_TRUE(e2.ok()) << e2.status();
  EXPECT_NE(e2->spec_hash, e->spec_hash);
  // ptxbench's own tags keep their one text.
  other.prompts["ptxb-basic"] = "something else";
  auto refused = ExpandSpec(other, **definitions, **scheduler_side, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("spec.json: $.prompt_tags[1]: expected a tag that is not one of "
                        "ptxbench's own, found \"ptxb-basic\"; a submission cannot bring another "
                        "text for it"));
}

// PTXBench's tags for Triton in an experiment of another language, or for
// GPUs the experiment does not target, are refused at submit, saying why,
// rather than run as something else; in a Triton experiment they are taken.
TEST_F(SpecHubTest, TagsForAnotherLanguageOrGpuAreRefused) {
  Write("hub/hub.json", R"({"hopper-no-hint": ["d/ptx_knowledge_sm90_plus.md"],
      "triton-hopper": ["d/triton_knowledge_sm90_plus.md"]})");
  for (const char* doc :
       {"hub/d/ptx_knowledge_sm90_plus.md", "hub/d/triton_knowledge_sm90_plus.md"}) {
    Write(doc, "x");
  }
  auto registry = Load("hub");
  ASSERT_TRUE(registry.ok()) << registry.status();
  SpecInput input;
  input.text = R"([{"num_trajectories": 1, "num_turns": 1, "target_speedup": 1.0,
                    "prompt_tag": "triton-hopper"}])";
  input.path = "quickstart-triton.json";
  input.default_definition = "gemm_n7168_k5120";
  input.default_model = "m";
  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok());
  // PTXBench's bare list names no language: its tags make it Triton, as
  // PTXBench's own configs/quickstart-triton.json is; a list that mixes
  // Triton and CUDA tags is refused, naming the first odd item.
  auto bare = ExpandSpec(input, **definitions, **registry, {});
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->language, "triton");
  input.text = R"([{"num_trajectories": 1, "num_turns": 1, "target_speedup": 1.0,
                    "prompt_tag": "triton-hopper"},
                   {"num_trajectories": 1, "num_turns": 1, "target_speedup": 1.0,
                    "prompt_tag": "hopper-no-hint"}])";
  auto mixed = ExpandSpec(input, **definitions, **registry, {});
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(),
              HasSubstr("quickstart-triton.json: $[1].prompt_tag: expected a Triton tag, as the "
                        "list's other items have, found \"hopper-no-hint\"; one experiment is in "
                        "one language"));
  // The object form's language is what it says: a Triton tag in a CUDA
  // experiment is refused.
  input.text = R"({"name": "q", "items": [
                    {"num_trajectories": 1, "num_turns": 1, "target_speedup": 1.0,
                     "prompt_tag": "triton-hopper"}]})";
  auto refused = ExpandSpec(input, **definitions, **registry, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("$.items[0].prompt_tag: expected a tag for cuda "
                        "kernels ptxbench evaluates on these GPUs, found \"triton-hopper\"; "
                        "prompt tag 'triton-hopper' asks for Triton kernels and the "
                        "experiment's language is cuda"));

  // The object form names its language: triton takes the tag, and refuses
  // the CUDA one.
  input.text = R"({"name": "quickstart-triton", "language": "triton", "items": [
                    {"num_trajectories": 1, "num_turns": 1, "target_speedup": 1.0,
                     "prompt_tag": "triton-hopper"}]})";
  auto taken = ExpandSpec(input, **definitions, **registry, {});
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->language, "triton");
  input.text = R"({"name": "q", "language": "triton", "items": [
                    {"num_trajectories": 1, "num_turns": 1, "target_speedup": 1.0,
                     "prompt_tag": "hopper-no-hint"}]})";
  EXPECT_THAT(ExpandSpec(input, **definitions, **registry, {}).status().message(),
              HasSubstr("$.items[0].prompt_tag: expected a tag for triton kernels ptxbench "
                        "evaluates on these GPUs, found \"hopper-no-hint\"; prompt tag "
                        "'hopper-no-hint' asks for CUDA or PTX kernels"));
}

// An experiment that targets Blackwell takes a Blackwell tag and refuses a
// Hopper one, naming the field; the default (Hopper) the other way round.
TEST_F(SpecHubTest, TagsMustBeForTheArchitecturesTheExperimentTargets) {
  Write("hub/hub.json", R"({"hopper-no-hint": ["d/k.md"], "b200-bf16": ["d/k.md"]})");
  Write("hub/d/k.md", "x");
  auto registry = Load("hub");
  ASSERT_TRUE(registry.ok()) << registry.status();
  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok());
  auto expand = [&](const std::string& tags, const std::string& architectures) {
    SpecInput input;
    input.text = absl::StrCat(R"({"name": "archs", "models": ["m"],
        "definitions": ["gemm_n7168_k5120"], "samples": 1, "num_turns": 1,
        "target_speedup": 1.0, "prompt_tags": )", tags, architectures, "}");
    input.path = "spec.json";
    return ExpandSpec(input, **definitions, **registry, {});
  };
  auto blackwell = expand(R"(["b200-bf16", "ptxb-no-hint"])", R"(, "architectures": ["blackwell"])");
  ASSERT_TRUE(blackwell.ok()) << blackwell.status();
  EXPECT_EQ(blackwell->architectures, (std::vector<std::string>{"sm_100", "sm_103"}));

  auto refused = expand(R"(["b200-bf16", "hopper-no-hint"])", R"(, "architectures": ["sm_100"])");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("spec.json: $.prompt_tags[1]: expected a tag for cuda kernels ptxbench "
                        "evaluates on these GPUs, found \"hopper-no-hint\"; prompt tag "
                        "'hopper-no-hint' is written for Hopper GPUs (hopper-no-hint) and the "
                        "experiment targets sm_100 (Blackwell)"));
  auto by_default = expand(R"(["b200-bf16"])", "");
  ASSERT_FALSE(by_default.ok());
  EXPECT_THAT(by_default.status().message(), HasSubstr("$.prompt_tags[0]"));
  EXPECT_THAT(by_default.status().message(), HasSubstr("name \"blackwell\" in the experiment's"));
  EXPECT_TRUE(expand(R"(["b200-bf16", "hopper-no-hint"])", R"(, "architectures": ["hopper", "blackwell"])").ok());
}

// PTXBench's prepared multiturn example, unchanged: its "kernel_policy" is
// the one policy ptxbench has, and any other value is refused by name.
TEST_F(SpecHubTest, PTXBenchsPreparedExampleRunsWithItsKernelPolicy) {
  Write("hub/hub.json", R"({"hopper-no-hint": ["d/k.md"]})");
  Write("hub/d/k.md", "x");
  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok()) << definitions.status();
  auto with_hub = Load("hub");
  ASSERT_TRUE(with_hub.ok()) << with_hub.status();
  SpecInput input;
  input.text = R"([{"num_trajectories": 1, "num_turns": 3, "target_speedup": 1.2,
                    "prompt_tag": "hopper-no-hint", "kernel_policy": "default"}])";
  input.path = "example.json";
  input.default_definition = "gemm_n7168_k5120";
  input.default_model = "gpt-5";
  auto e = ExpandSpec(input, **definitions, **with_hub, {});
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->trajectories.size(), 1u);
  EXPECT_EQ(e->trajectories[0].num_turns, 3);

  input.text = R"([{"num_trajectories": 1, "num_turns": 3, "target_speedup": 1.2,
                    "prompt_tag": "hopper-no-hint", "kernel_policy": "library-fallback"}])";
  auto refused = ExpandSpec(input, **definitions, **with_hub, {});
  EXPECT_EQ(std::string(refused.status().message()),
            "example.json: $[0].kernel_policy: expected one of \"default\", found "
            "\"library-fallback\"");
}

}  // namespace
}  // namespace ptxbench::experiment_spec
