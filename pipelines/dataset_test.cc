// The dataset stage (dataset.h): PTXBench's fixit5 and kernelgen3 records,
// the reasoning in <think>, loss on the last message only, rows not
// synthesized or too long left out and counted.

#include "pipelines/dataset.h"

#include <gtest/gtest.h>

namespace ptxbench::pipelines {
namespace {

Stage DatasetStage(const std::string& shape, int64_t max_chars) {
  Stage s;
  s.kind = "dataset";
  s.params = {{"shape", shape}, {"max_chars", max_chars}};
  return s;
}

SynthesizedRow Row(const std::string& trajectory, bool synthesized, bool fix) {
  SynthesizedRow r;
  r.row.definition = "gemm_n7168_k5120";
  r.row.kernel = {trajectory, 1};
  if (fix) r.row.wrong = TurnRef{"tr_w", 2};
  r.synthesized = synthesized;
  r.text = synthesized ? "because" : "";
  return r;
}

TEST(DatasetTest, Fixit5HasFiveMessagesAndLossOnTheFixOnly) {
  const RecordTexts texts{"SYS", "TASK", "WRONG", "LOG", "FIXED"};
  const Dataset d = BuildDataset(DatasetStage("fixit5", 0),
                                 {Row("tr_a", true, true), Row("tr_b", false, true)},
                                 {texts, texts});
  EXPECT_EQ(d.counts["records"], 1);
  EXPECT_EQ(d.counts["not_synthesized"], 1);
  const nlohmann::json r = nlohmann::json::parse(d.jsonl.substr(0, d.jsonl.find('\n')));
  EXPECT_EQ(r["id"], "tr_a_t1");
  ASSERT_EQ(r["messages"].size(), 5u);
  const std::vector<std::string> roles = {"system", "user", "assistant", "user", "assistant"};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r["messages"][i]["role"], roles[i]);
    EXPECT_EQ(r["messages"][i]["step_loss_mask"], i == 4 ? 1 : 0);
  }
  EXPECT_EQ(r["messages"][2]["content"], "WRONG");
  EXPECT_EQ(r["messages"][3]["content"], "LOG");
  EXPECT_EQ(r["messages"][4]["content"], "<think>\nbecause\n</think>\n\nFIXED");
  EXPECT_EQ(r["metadata"]["wrong"]["trajectory_id"], "tr_w");
}

TEST(DatasetTest, Kernelgen3HasThreeMessagesAndTooLongRecordsAreCounted) {
  const RecordTexts texts{"SYS", "TASK", "", "", "ANSWER"};
  const Dataset d = BuildDataset(DatasetStage("kernelgen3", 40),
                                 {Row("tr_a", true, false)}, {texts});
  EXPECT_EQ(d.counts["records"], 1);
  const nlohmann::json r = nlohmann::json::parse(d.jsonl);
  ASSERT_EQ(r["messages"].size(), 3u);
  EXPECT_EQ(r["messages"][2]["step_loss_mask"], 1);
  const Dataset tight = BuildDataset(DatasetStage("kernelgen3", 10), {Row("tr_a", true, false)},
                                     {texts});
  EXPECT_EQ(tight.counts["records"], 0);
  EXPECT_EQ(tight.counts["too_long"], 1);
  EXPECT_TRUE(tight.jsonl.empty());
}

}  // namespace
}  // namespace ptxbench::pipelines
