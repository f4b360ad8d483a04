// The synthesize stage (synthesize.h): its rows read from pairs or a
// selection, the synthesis spec with one filled template per row, and the
// result collected from the finished experiment.

#include "pipelines/synthesize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/hash.h"

namespace ptxbench::pipelines {
namespace {

using ::testing::HasSubstr;
namespace v1 = ::ptxbench::v1;

Pipeline Fixit() {
  absl::StatusOr<Pipeline> p = ReadPipeline(R"({"name": "fixit", "stages": [
      {"name": "failed", "kind": "select", "experiments": ["base"], "rows": "failed"},
      {"name": "repairs", "kind": "derive", "from": "failed", "model": "m",
       "prompt_tag": "ptxb-no-hint"},
      {"name": "pairs", "kind": "pairs", "from": "repairs"},
      {"name": "reasoning", "kind": "synthesize", "from": "pairs", "model": "reasoner",
       "template": "fixit", "min_chars": 5, "max_chars": 50, "max_passes": 2}]})",
                                            "p.json");
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

constexpr char kPair[] =
    R"({"definition": "gemm_n7168_k5120", "wrong": {"experiment_id": "exp_1", "trajectory_id": )"
    R"("tr_w", "turn": 1, "status": "INCORRECT_NUMERICAL", "kernel_sha256": "a", "log_sha256": )"
    R"("b"}, "fixed": {"experiment_id": "exp_2", "trajectory_id": "tr_f", "turn": 0, )"
    R"("speedup": 1.2, "kernel_sha256": "c", "hopper": false}})"
    "\n";

TEST(SynthesizeTest, EachPairIsARowWithItsFilledTemplate) {
  const Pipeline p = Fixit();
  const Stage& stage = p.stages[3];
  absl::StatusOr<std::vector<SynthesisRow>> rows = ReadPairsForSynthesis(kPair);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].kernel.trajectory_id, "tr_f");
  ASSERT_TRUE((*rows)[0].wrong.has_value());
  EXPECT_EQ((*rows)[0].wrong->turn, 1);
  const SynthesisExperiment x = BuildSynthesisExperiment(
      p, stage, *rows, {{"TASK {kernel}", "FIXED", "WRONG", "LOG"}});
  EXPECT_EQ(x.name, "fixit.reasoning." + stage.id.substr(3, 12));
  const nlohmann::json spec = nlohmann::json::parse(x.spec_json);
  EXPECT_EQ(spec["mode"], "synthesis");
  EXPECT_EQ(spec["models"][0], "reasoner");
  EXPECT_EQ(spec["max_passes"], 2);
  EXPECT_EQ(spec["system"], FindTemplate("fixit").system);
  const std::string prompt = x.files.at(spec["rows"][0]["prompt_path"].get<std::string>());
  EXPECT_THAT(prompt, HasSubstr("TASK {kernel}")) << "filled in one pass";
  EXPECT_THAT(prompt, HasSubstr("<wrong_kernel>\nWRONG\n"));
  EXPECT_THAT(prompt, HasSubstr("<feedback>\nLOG\n"));
  EXPECT_THAT(prompt, HasSubstr("<fixed_kernel>\nFIXED\n"));
  EXPECT_NE(FindTemplate("fixit").sha256, FindTemplate("kernelgen").sha256);
  EXPECT_FALSE(ReadPairsForSynthesis("{\"definition\": 1}\n").ok());
}

TEST(SynthesizeTest, ARowsTextIsItsAnswerWithinTheBoundsAndReadsBack) {
  const Pipeline p = Fixit();
  absl::StatusOr<std::vector<SynthesisRow>> rows =
      ReadPairsForSynthesis(absl::StrCat(kPair, kPair));
  ASSERT_TRUE(rows.ok());
  v1::Trajectory done;
  done.mutable_summary()->set_trajectory_id("tr_s0");
  done.mutable_summary()->set_sample_index(0);
  done.mutable_summary()->set_state(v1::SUBMITTED);
  done.add_turns()->mutable_response()->set_text("too short? no: outside");
  done.add_turns()->mutable_response()->set_text("the reasoning");
  v1::Trajectory spent;
  spent.mutable_summary()->set_sample_index(1);
  spent.mutable_summary()->set_state(v1::LIMITS_EXCEEDED);
  spent.add_turns()->mutable_response()->set_text("x");
  const Synthesis s = CollectSynthesis(p.stages[3], *rows, {spent, done});
  EXPECT_EQ(s.counts["rows"], 2);
  EXPECT_EQ(s.counts["synthesized"], 1);
  EXPECT_EQ(s.counts["passes"], 3);
  absl::StatusOr<std::vector<SynthesizedRow>> back = ReadSynthesisJsonl(s.jsonl);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_TRUE((*back)[0].synthesized);
  EXPECT_EQ((*back)[0].text, "the reasoning") << "the last pass, the one within the bounds";
  EXPECT_FALSE((*back)[1].synthesized);
  EXPECT_EQ((*back)[0].row.source["fixed"]["kernel_sha256"], "c") << "the pair, as lineage";
}

}  // namespace
}  // namespace ptxbench::pipelines
