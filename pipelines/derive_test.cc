// The derive stage's experiment (derive.h): one fix-it item per source in
// order, its files, its name, and the selection file read back.

#include "pipelines/derive.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/hash.h"

namespace ptxbench::pipelines {
namespace {

using ::testing::HasSubstr;

TEST(DeriveTest, EachSourceIsAFixItItemWithItsKernelAndLog) {
  absl::StatusOr<Pipeline> pipeline = ReadPipeline(R"({"name": "fixit", "stages": [
      {"name": "failed", "kind": "select", "experiments": ["base"], "rows": "failed"},
      {"name": "repairs", "kind": "derive", "from": "failed", "model": "m",
       "prompt_tag": "ptxb-no-hint", "num_turns": 3}]})",
                                                   "p.json");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  const Stage& stage = pipeline->stages[1];
  Row a;
  a.experiment_id = "exp_1";
  a.trajectory_id = "tr_a";
  a.definition = "gemm_n7168_k5120";
  a.turn = 2;
  a.status = "COMPILE_ERROR";
  Row b = a;
  b.trajectory_id = "tr_b";
  b.definition = "mha_with_lse_d128";
  const DerivedExperiment d =
      BuildDerivedExperiment(*pipeline, stage, {{a, "kernel A", "log A"}, {b, "kernel B", "log B"}});
  EXPECT_EQ(d.name, "fixit.repairs." + stage.id.substr(3, 12));
  const nlohmann::json spec = nlohmann::json::parse(d.spec_json);
  ASSERT_EQ(spec.size(), 2u);
  EXPECT_EQ(spec[1]["definition"], "mha_with_lse_d128");
  EXPECT_EQ(spec[0]["num_turns"], 3);
  EXPECT_EQ(spec[0]["target_speedup"], 0.15) << "the stage's default";
  EXPECT_EQ(spec[0]["prompt_tag"], "ptxb-no-hint");
  EXPECT_EQ(d.files.at(spec[1]["error_kernel_path"].get<std::string>()), "kernel B");
  EXPECT_EQ(d.files.at(spec[1]["error_log_path"].get<std::string>()), "log B");
  EXPECT_THAT(d.items_jsonl, HasSubstr("\"trajectory_id\":\"tr_b\""));
  EXPECT_THAT(d.items_jsonl, HasSubstr(Sha256Hex("log A")));
}

// With an agent object the spec is the list spec's object form in agent
// mode: no turn limit per item, each session starting from its kernel.
TEST(DeriveTest, WithAnAgentEachItemIsASessionStartingFromItsKernel) {
  absl::StatusOr<Pipeline> pipeline = ReadPipeline(R"({"name": "fixit", "stages": [
      {"name": "failed", "kind": "select", "experiments": ["base"], "rows": "failed"},
      {"name": "repairs", "kind": "derive", "from": "failed", "model": "m",
       "prompt_tag": "ptxb-no-hint",
       "agent": {"cli": "codex", "token_budget": 50000, "max_evaluations": 4}}]})",
                                                   "p.json");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  const Stage& stage = pipeline->stages[1];
  EXPECT_FALSE(stage.params.contains("num_turns")) << stage.params.dump();
  Row a;
  a.trajectory_id = "tr_a";
  a.definition = "gemm_n7168_k5120";
  const DerivedExperiment d = BuildDerivedExperiment(*pipeline, stage, {{a, "kernel A", "log A"}});
  const nlohmann::json spec = nlohmann::json::parse(d.spec_json);
  EXPECT_EQ(spec["mode"], "agent");
  EXPECT_EQ(spec["agent"]["cli"], "codex");
  EXPECT_EQ(spec["agent"]["starter"], "fixit") << "the default of a derived session";
  ASSERT_EQ(spec["items"].size(), 1u);
  EXPECT_FALSE(spec["items"][0].contains("num_turns"));
  EXPECT_EQ(d.files.at(spec["items"][0]["error_kernel_path"].get<std::string>()), "kernel A");
}

TEST(DeriveTest, ASelectionFileReadsBackOrIsRefusedByLine) {
  Selection s;
  Row r;
  r.experiment_id = "exp_1";
  r.trajectory_id = "tr_a";
  r.definition = "d";
  r.prompt_tag = "t";
  r.turn = 1;
  r.status = "TIMEOUT";
  r.speedup = 0;
  r.kernel_sha256 = "abc";
  r.hopper = true;
  s.rows = {r, r};
  absl::StatusOr<std::vector<Row>> rows = ReadSelectionJsonl(SelectionJsonl(s));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].trajectory_id, "tr_a");
  EXPECT_EQ((*rows)[1].status, "TIMEOUT");
  EXPECT_TRUE((*rows)[1].hopper);
  absl::StatusOr<std::vector<Row>> bad = ReadSelectionJsonl(SelectionJsonl(s) + "{\"turn\": 1}\n");
  EXPECT_EQ(bad.status().message(), "selection.jsonl: line 3 is not a selected row");
}

}  // namespace
}  // namespace ptxbench::pipelines
