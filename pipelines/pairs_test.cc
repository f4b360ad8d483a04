// The pairs stage (pairs.h): each derived trajectory's wrong kernel with its
// first (or every) correct fix, filtered by speedup and Hopper PTX.

#include "pipelines/pairs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "pipelines/derive.h"

namespace ptxbench::pipelines {
namespace {

namespace v1 = ::ptxbench::v1;

// A derived trajectory of `sample` whose turns have `statuses`, the passed
// ones at `speedup`, Hopper PTX from turn `hopper_from` on.
v1::Trajectory Derived(int sample, const std::vector<v1::EvalStatus>& statuses, double speedup,
                       int hopper_from = 99) {
  v1::Trajectory t;
  t.mutable_summary()->set_trajectory_id(absl::StrCat("tr_d", sample));
  t.mutable_summary()->set_sample_index(sample);
  t.mutable_summary()->set_definition("gemm");
  for (size_t i = 0; i < statuses.size(); ++i) {
    v1::Turn* turn = t.add_turns();
    turn->set_index(static_cast<int>(i));
    turn->set_kernel_sha256(absl::StrCat("fix", sample, "_", i));
    turn->mutable_eval()->set_status(statuses[i]);
    turn->mutable_eval()->set_min_speedup(statuses[i] == v1::PASSED ? speedup : 0);
    if (statuses[i] == v1::PASSED) {  // as a worker writes it: every workload passed
      turn->mutable_eval()->set_all_passed(true);
      v1::WorkloadTrace* trace = turn->mutable_eval()->add_traces();
      trace->set_status(v1::PASSED);
      trace->set_speedup(speedup);
    }
    if (static_cast<int>(i) >= hopper_from) {
      (*turn->mutable_eval()->mutable_ptx()->mutable_architecture_counts())["hopper"] = 1;
    }
  }
  return t;
}

std::vector<Item> Items(int n) {
  std::vector<Item> items;
  for (int i = 0; i < n; ++i) {
    Item item;
    item.sample_index = i;
    item.trajectory_id = absl::StrCat("tr_src", i);
    item.definition = "gemm";
    item.status = "COMPILE_ERROR";
    item.kernel_sha256 = absl::StrCat("wrong", i);
    items.push_back(item);
  }
  return items;
}

TEST(PairsTest, EachWrongKernelGoesWithItsFixes) {
  const std::vector<v1::Trajectory> derived = {
      Derived(0, {v1::COMPILE_ERROR, v1::PASSED, v1::PASSED}, 0.5, 2),
      Derived(1, {v1::RUNTIME_ERROR, v1::TIMEOUT}, 0),
      Derived(2, {v1::PASSED}, 2.0)};
  Pairs first = MakePairs(Items(4), "exp_d", derived, {{"which", "first"}});
  EXPECT_EQ(first.items, 4);
  EXPECT_EQ(first.repaired, 2);
  ASSERT_EQ(first.pairs.size(), 2u);
  EXPECT_EQ(first.pairs[0].wrong.kernel_sha256, "wrong0");
  EXPECT_EQ(first.pairs[0].fixed.turn, 1) << "the first fix";
  EXPECT_EQ(first.pairs[0].fixed.experiment_id, "exp_d");
  EXPECT_EQ(first.pairs[1].fixed.trajectory_id, "tr_d2");
  EXPECT_EQ(MakePairs(Items(4), "exp_d", derived, {{"which", "every"}}).pairs.size(), 3u);
  Pairs fast = MakePairs(Items(4), "exp_d", derived, {{"min_speedup", 1.0}});
  ASSERT_EQ(fast.pairs.size(), 1u);
  EXPECT_EQ(fast.pairs[0].fixed.trajectory_id, "tr_d2");
  Pairs hopper = MakePairs(Items(4), "exp_d", derived, {{"arch_features", "hopper"}});
  ASSERT_EQ(hopper.pairs.size(), 1u);
  EXPECT_EQ(hopper.pairs[0].fixed.turn, 2) << "the first fix with Hopper PTX";
  EXPECT_EQ(PairsCounts(first)["pairs"], 2);
  EXPECT_THAT(PairsJsonl(first), ::testing::HasSubstr("\"wrong\":{"));
}

TEST(PairsTest, ItemsReadBackFromTheDeriveStage) {
  absl::StatusOr<Pipeline> pipeline = ReadPipeline(R"({"name": "f", "stages": [
      {"name": "s", "kind": "select", "experiments": ["b"], "rows": "failed"},
      {"name": "d", "kind": "derive", "from": "s", "model": "m", "prompt_tag": "t"}]})",
                                                   "p.json");
  ASSERT_TRUE(pipeline.ok());
  Row row;
  row.experiment_id = "exp_1";
  row.trajectory_id = "tr_a";
  row.definition = "gemm";
  row.turn = 3;
  row.status = "TIMEOUT";
  const DerivedExperiment d =
      BuildDerivedExperiment(*pipeline, pipeline->stages[1], {{row, "k", "l"}, {row, "k2", "l2"}});
  absl::StatusOr<std::vector<Item>> items = ReadItemsJsonl(d.items_jsonl);
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[1].sample_index, 1);
  EXPECT_EQ((*items)[1].turn, 3);
  EXPECT_EQ((*items)[1].status, "TIMEOUT");
  EXPECT_FALSE(ReadItemsJsonl("{}\n").ok());
}

}  // namespace
}  // namespace ptxbench::pipelines
