// Held-out workloads in a spec (docs/FORMATS.md, "Held-out workloads").

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "experiment_spec/rendered_prompts.h"
#include "experiment_spec/spec_test_fixture.h"

namespace ptxbench::experiment_spec {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using HeldOutTest = SpecTest;

// "M=70" for a workload of the bundled GEMM, as a task prompt lists it.
std::string AxesLine(const workloads::Definition& d, const std::string& uuid) {
  for (const workloads::Workload& w : d.workloads) {
    if (w.uuid != uuid) continue;
    std::string line;
    for (const auto& [axis, value] : w.axes) absl::StrAppend(&line, axis, "=", value);
    return absl::StrCat("- ", line, "\n");
  }
  return "?";
}

TEST_F(HeldOutTest, ACountHoldsOutTheSameWorkloadsOfADefinitionForEveryTrajectory) {
  Json spec = Matrix();
  spec["held_out_workloads"] = 1;
  absl::StatusOr<ExpandedExperiment> x = Expand(spec);
  ASSERT_TRUE(x.ok()) << x.status();
  std::map<std::string, std::vector<std::string>> by_definition;
  for (const TrajectorySpec& t : x->trajectories) {
    const workloads::Definition& d = **definitions_->Find(t.definition);
    ASSERT_EQ(t.held_out.size(), 1u) << t.trajectory_id;
    // Evaluated on every workload, in the definition's order; one held out.
    ASSERT_EQ(t.workloads.size(), d.workloads.size());
    for (size_t i = 0; i < d.workloads.size(); ++i) EXPECT_EQ(t.workloads[i], d.workloads[i].uuid);
    auto [it, fresh] = by_definition.try_emplace(t.definition, t.held_out);
    if (!fresh) EXPECT_EQ(it->second, t.held_out) << "model " << t.model << " tag " << t.prompt_tag;
  }
  EXPECT_EQ(by_definition.size(), 2u);
  EXPECT_THAT(x->normalized_json, HasSubstr("\"held_out_workloads\":1"));

  // Part of the spec: another count is another spec; the same spec holds out
  // the same workloads again; another experiment name may choose others.
  Json gemm_only = Matrix();
  gemm_only["definitions"] = {"gemm_n7168_k5120"};
  gemm_only["held_out_workloads"] = 2;
  absl::StatusOr<ExpandedExperiment> y = Expand(gemm_only);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->trajectories[0].held_out.size(), 2u);
  EXPECT_NE(y->spec_hash, x->spec_hash);
  absl::StatusOr<ExpandedExperiment> again = Expand(gemm_only);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->trajectories[0].held_out, y->trajectories[0].held_out);
  std::set<std::vector<std::string>> across_names;
  for (int i = 0; i < 8; ++i) {
    gemm_only["name"] = absl::StrCat("sweep-", i);
    absl::StatusOr<ExpandedExperiment> named = Expand(gemm_only);
    ASSERT_TRUE(named.ok());
    across_names.insert(named->trajectories[0].held_out);
  }
  EXPECT_GT(across_names.size(), 1u) << "the choice does not depend on the experiment";
}

TEST_F(HeldOutTest, TheTaskPromptListsTheShownWorkloadsOnly) {
  Json spec = Matrix();
  spec["definitions"] = {"gemm_n7168_k5120"};
  spec["held_out_workloads"] = 2;
  absl::StatusOr<ExpandedExperiment> x = Expand(spec);
  ASSERT_TRUE(x.ok()) << x.status();
  absl::StatusOr<RenderedPrompts> p = RenderPrompts(*x, *definitions_, *prompts_);
  ASSERT_TRUE(p.ok()) << p.status();
  const TrajectorySpec& t = x->trajectories[0];
  const std::string& task = p->task_by_key.at(TaskPromptKey(t));
  const workloads::Definition& d = **definitions_->Find(t.definition);
  int shown = 0;
  for (const std::string& uuid : t.workloads) {
    const bool held = std::find(t.held_out.begin(), t.held_out.end(), uuid) != t.held_out.end();
    if (held) {
      EXPECT_THAT(task, Not(HasSubstr(AxesLine(d, uuid))));
    } else {
      EXPECT_THAT(task, HasSubstr(AxesLine(d, uuid)));
      ++shown;
    }
  }
  EXPECT_EQ(shown, 3);
  // Without held-out workloads the prompt lists all five: the test reads
  // the lines the prompt really has.
  const std::string all = prompts::PromptRegistry::RenderTaskPrompt(d, "cuda", 1.5, 10);
  for (const std::string& uuid : t.held_out) EXPECT_THAT(all, HasSubstr(AxesLine(d, uuid)));
}

TEST_F(HeldOutTest, ByUuidHoldsOutThoseOfTheTrajectoriesThatEvaluateThem) {
  Json spec = Matrix();
  const std::string m70 = "729b8d2e-8307-57e0-b6f5-d50957348534";
  spec["held_out_workloads"] = {m70};
  absl::StatusOr<ExpandedExperiment> x = Expand(spec);
  ASSERT_TRUE(x.ok()) << x.status();
  for (const TrajectorySpec& t : x->trajectories) {
    if (t.definition == "gemm_n7168_k5120") {
      EXPECT_EQ(t.held_out, std::vector<std::string>{m70});
    } else {
      EXPECT_TRUE(t.held_out.empty());
      EXPECT_TRUE(t.workloads.empty());  // all, as without the field
    }
  }
}

TEST_F(HeldOutTest, WhatCannotBeHeldOutIsRefusedNamingWhy) {
  Json spec = Matrix();
  spec["held_out_workloads"] = 2;  // mha_with_lse_d128 has two workloads
  ExpectInvalid(Expand(spec),
                "spec.json: $.held_out_workloads: expected fewer workloads than a trajectory is "
                "evaluated on, found 2; definition mha_with_lse_d128's trajectories are evaluated "
                "on 2 workload(s); holding out 2 would leave none to show");
  spec["held_out_workloads"] = {"no-such-workload"};
  ExpectInvalid(Expand(spec),
                "spec.json: $.held_out_workloads: expected workloads the experiment evaluates, "
                "found [\"no-such-workload\"]; no trajectory is evaluated on workload "
                "no-such-workload");
  spec["held_out_workloads"] = 0;
  EXPECT_EQ(Expand(spec).status().code(), absl::StatusCode::kInvalidArgument);
  spec["held_out_workloads"] = "1";
  EXPECT_EQ(Expand(spec).status().code(), absl::StatusCode::kInvalidArgument);
  spec["held_out_workloads"] = 1;
  spec["eval"] = "compile-only";
  EXPECT_EQ(Expand(spec).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(HeldOutTest, AListItemsTestScriptWorkloadCannotAlsoBeHeldOut) {
  // A PTXBench test script holds its trajectories to one workload: holding
  // it out leaves none to show.
  SpecInput input;
  input.text = R"({"name": "one", "held_out_workloads": 1, "items": [
    {"num_trajectories": 1, "num_turns": 5, "target_speedup": 1.0, "prompt_tag": "ptxb-no-hint",
     "test_path": "t.py"}]})";
  input.path = "cfg.json";
  input.default_definition = "gemm_n7168_k5120";
  input.default_model = "gpt-5";
  input.files = {{"t.py", "WORKLOAD_UUID = \"242ddd1a-ee21-5a9c-b2f7-9867cc517890\"\n"}};
  absl::StatusOr<ExpandedExperiment> x = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_EQ(x.status().code(), absl::StatusCode::kInvalidArgument) << x.status();
  EXPECT_THAT(std::string(x.status().message()), HasSubstr("would leave none to show"));
}

}  // namespace
}  // namespace ptxbench::experiment_spec
