#include "experiment_spec/rendered_prompts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "experiment_spec/spec_test_fixture.h"

namespace ptxbench::experiment_spec {
namespace {

using RenderedPromptsTest = SpecTest;

// One system prompt per tag, the registry's with the ABI of the experiment's
// language; one task prompt per distinct (definition, target, turns, ...),
// shared by the trajectories that differ only in model, tag or sample.
TEST_F(RenderedPromptsTest, EachTagAndEachTaskIsRenderedOnce) {
  absl::StatusOr<ExpandedExperiment> x = Expand(Matrix());
  ASSERT_TRUE(x.ok()) << x.status();
  absl::StatusOr<RenderedPrompts> p = RenderPrompts(*x, *definitions_, *prompts_);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->system_by_tag.size(), 2u);
  for (const std::string tag : {"ptxb-no-hint", "ptxb-expert"}) {
    EXPECT_EQ(p->system_by_tag.at(tag), *prompts_->RenderSystemPrompt(tag, "cuda"));
  }
  EXPECT_EQ(p->task_by_key.size(), 2u);  // the two definitions
  for (const TrajectorySpec& t : x->trajectories) {
    ASSERT_TRUE(p->task_by_key.contains(TaskPromptKey(t))) << t.trajectory_id;
    EXPECT_EQ(p->task_by_key.at(TaskPromptKey(t)),
              prompts::PromptRegistry::RenderTaskPrompt(**definitions_->Find(t.definition), "cuda",
                                                        1.5, 10));
  }
}

// A fix-it item's task prompt carries its kernel and log; an ordinary item
// of the same definition has a task prompt of its own without them.
TEST_F(RenderedPromptsTest, AFixItItemsTaskShowsItsKernelAndLog) {
  SpecInput input;
  input.text = R"([
    {"num_trajectories": 1, "num_turns": 5, "target_speedup": 1.0, "prompt_tag": "ptxb-no-hint",
     "error_kernel_path": "broken/k.cu", "error_log_path": "broken/k.log"},
    {"num_trajectories": 1, "num_turns": 5, "target_speedup": 1.0, "prompt_tag": "ptxb-no-hint"}])";
  input.path = "cfg.json";
  input.default_definition = "gemm_n7168_k5120";
  input.default_model = "gpt-5";
  input.files = {{"broken/k.cu", "__global__ void k() {}"}, {"broken/k.log", "illegal address"}};
  absl::StatusOr<ExpandedExperiment> x = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(x.ok()) << x.status();
  absl::StatusOr<RenderedPrompts> p = RenderPrompts(*x, *definitions_, *prompts_);
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string& fix = p->task_by_key.at(TaskPromptKey(x->trajectories[0]));
  const std::string& plain = p->task_by_key.at(TaskPromptKey(x->trajectories[1]));
  EXPECT_TRUE(absl::EndsWith(fix, prompts::PromptRegistry::RenderRepairPrompt(
                                      "__global__ void k() {}", "illegal address", "cuda")));
  EXPECT_TRUE(absl::StartsWith(fix, plain));
  EXPECT_THAT(plain, ::testing::Not(::testing::HasSubstr("illegal address")));
}

// A tag the submission brought is its text, as it came, with the ABI.
TEST_F(RenderedPromptsTest, ABroughtTagIsItsOwnText) {
  Json spec = Matrix();
  spec["prompt_tags"] = {"my-own-tag"};
  SpecInput input;
  input.text = spec.dump();
  input.path = "spec.json";
  input.prompts = {{"my-own-tag", "Write the fastest kernel you can.\n\n"}};
  absl::StatusOr<ExpandedExperiment> x = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(x.ok()) << x.status();
  absl::StatusOr<RenderedPrompts> p = RenderPrompts(*x, *definitions_, *prompts_);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->system_by_tag.at("my-own-tag"),
            *prompts_->WithAbi("Write the fastest kernel you can.\n\n", "cuda"));
}

}  // namespace
}  // namespace ptxbench::experiment_spec
