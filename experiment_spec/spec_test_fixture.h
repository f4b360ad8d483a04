#ifndef PTXBENCH_EXPERIMENT_SPEC_SPEC_TEST_FIXTURE_H_
#define PTXBENCH_EXPERIMENT_SPEC_SPEC_TEST_FIXTURE_H_

// The fixture of the spec reader's tests (spec_test.cc,
// agent_settings_test.cc): the bundled definitions and prompts, a sample
// matrix, and expansion with its exact error.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "experiment_spec/spec.h"

namespace ptxbench::experiment_spec {

class SpecTest : public ::testing::Test {
 public:
  using Json = nlohmann::json;

 protected:
  static void SetUpTestSuite() {
    auto definitions = workloads::DefinitionRegistry::Load({});
    ASSERT_TRUE(definitions.ok()) << definitions.status();
    definitions_ = definitions->release();
    auto prompts = PromptRegistry::Load(PromptRegistry::BundledRoot());
    ASSERT_TRUE(prompts.ok()) << prompts.status();
    prompts_ = prompts->release();
  }
  static void TearDownTestSuite() {
    delete definitions_;
    delete prompts_;
  }

  // 2 models x 2 definitions x 2 tags x 3 samples.
  static Json Matrix() {
    return Json::parse(R"({
      "name": "sweep-1", "models": ["gpt-5", "anthropic/claude-opus-4.1"],
      "definitions": ["gemm_n7168_k5120", "mha_with_lse_d128"],
      "prompt_tags": ["ptxb-no-hint", "ptxb-expert"],
      "samples": 3, "num_turns": 10, "target_speedup": 1.5})");
  }

  static absl::StatusOr<ExpandedExperiment> Expand(const std::string& text,
                                                   SpecLimits limits = {}) {
    SpecInput input;
    input.text = text;
    input.path = "spec.json";
    return ExpandSpec(input, *definitions_, *prompts_, limits);
  }
  static absl::StatusOr<ExpandedExperiment> Expand(const Json& spec,
                                                   SpecLimits limits = {}) {
    return Expand(spec.dump(2), limits);
  }

  // Asserts INVALID_ARGUMENT with exactly `message`.
  static void ExpectInvalid(const absl::StatusOr<ExpandedExperiment>& result,
                            const std::string& message) {
    ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
        << result.status();
    EXPECT_EQ(std::string(result.status().message()), message);
  }

  // Every field of every trajectory, for byte comparisons.
  static std::string Serialize(const ExpandedExperiment& e) {
    std::string out =
        absl::StrCat(e.experiment_id, "|", e.name, "|", e.normalized_json, "|",
                     e.spec_hash, "|", e.priority, "|", e.eval_mode, "|", e.language, "|",
                     e.context_policy, "|", e.max_cost_usd, "\n");
    for (const TrajectorySpec& t : e.trajectories) {
      absl::StrAppend(&out, t.trajectory_id, "|", t.model, "|", t.definition, "|",
                      t.prompt_tag, "|", t.sample_index, "|", t.num_turns, "|",
                      t.target_speedup, "\n");
    }
    return out;
  }

  static inline workloads::DefinitionRegistry* definitions_ = nullptr;
  static inline PromptRegistry* prompts_ = nullptr;
};

}  // namespace ptxbench::experiment_spec

#endif  // PTXBENCH_EXPERIMENT_SPEC_SPEC_TEST_FIXTURE_H_
