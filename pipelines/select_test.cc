// The select stage's choice (select.h): the rows a trajectory offers, the
// filters, and the per-definition cap by deterministic stratified sampling.

#include "pipelines/select.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "absl/strings/str_cat.h"

namespace ptxbench::pipelines {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = nlohmann::json;

Row MakeRow(const std::string& definition, int trajectory, int turn, const std::string& status,
            double speedup = 0, bool hopper = false) {
  Row r;
  r.experiment_id = "exp_1";
  r.trajectory_id = absl::StrCat("tr_", trajectory);
  r.definition = definition;
  r.prompt_tag = trajectory % 2 ? "odd" : "even";
  r.turn = turn;
  r.status = status;
  r.correct = status == "PASSED";  // as RowsOf judges a consistent result
  r.speedup = speedup;
  r.kernel_sha256 = absl::StrCat("k", trajectory, "_", turn);
  r.hopper = hopper;
  return r;
}

TEST(SelectTest, ATrajectoryOffersItsJudgedTurns) {
  v1::Trajectory t;
  t.mutable_summary()->set_trajectory_id("tr_9");
  t.mutable_summary()->set_definition("gemm");
  t.mutable_summary()->set_prompt_tag("tag");
  const v1::EvalStatus statuses[] = {v1::COMPILE_ERROR, v1::INFRA_ERROR, v1::PASSED, v1::COMPILED};
  for (int i = 0; i < 4; ++i) {
    v1::Turn* turn = t.add_turns();
    turn->set_index(i);
    turn->set_kernel_sha256(absl::StrCat("k", i));
    turn->mutable_eval()->set_status(statuses[i]);
    turn->mutable_eval()->set_min_speedup(i == 2 ? 1.5 : 0);
    if (i == 2) {  // passed as a worker writes it: every workload passed
      turn->mutable_eval()->set_all_passed(true);
      v1::WorkloadTrace* trace = turn->mutable_eval()->add_traces();
      trace->set_status(v1::PASSED);
      trace->set_speedup(1.5);
    }
    if (i == 2) (*turn->mutable_eval()->mutable_ptx()->mutable_architecture_counts())["hopper"] = 3;
  }
  t.add_turns()->set_index(4);  // no kernel, no evaluation
  const std::vector<Row> rows = RowsOf("exp_1", t);
  ASSERT_EQ(rows.size(), 3u) << "infrastructure errors judge nothing";
  EXPECT_EQ(rows[0].status, "COMPILE_ERROR");
  EXPECT_FALSE(rows[0].hopper);
  EXPECT_EQ(rows[1].turn, 2);
  EXPECT_EQ(rows[1].speedup, 1.5);
  EXPECT_TRUE(rows[1].correct);
  EXPECT_TRUE(rows[1].hopper);
  EXPECT_EQ(rows[1].definition, "gemm");
  EXPECT_EQ(rows[2].status, "COMPILED");
  EXPECT_EQ(rows[1].hopper_from, "ptx");
  // Where the worker listed the SASS, that census decides: here the PTX asks
  // for Hopper instructions the GPU code does not have.
  t.mutable_turns(2)->mutable_eval()->mutable_sass()->set_instructions(40);
  const std::vector<Row> from_sass = RowsOf("exp_1", t);
  EXPECT_FALSE(from_sass[1].hopper);
  EXPECT_EQ(from_sass[1].hopper_from, "sass");
  // A compile is no failure, and correct only when the stage accepts it.
  nlohmann::json failed = {{"rows", "failed"}};
  EXPECT_EQ(Select(rows, failed).rows.size(), 1u);
  nlohmann::json correct = {{"rows", "correct"}};
  EXPECT_EQ(Select(rows, correct).rows.size(), 1u);
  correct["accept_compiled"] = "yes";
  EXPECT_EQ(Select(rows, correct).rows.size(), 2u);
}

// A failed evaluation has no speedup and is no correct row, whatever its
// result says: the simulated evaluator once kept the passed workloads'
// minimum on an INCORRECT_NUMERICAL, and results stored then say so.
TEST(SelectTest, AFailedTurnHasNoSpeedupWhateverItsResultSays) {
  v1::Trajectory t;
  t.mutable_summary()->set_trajectory_id("tr_1");
  v1::Turn* turn = t.add_turns();
  turn->set_kernel_sha256("k0");
  v1::EvalResult* eval = turn->mutable_eval();
  eval->set_status(v1::INCORRECT_NUMERICAL);
  eval->set_min_speedup(1.3);
  eval->add_traces()->set_status(v1::INCORRECT_NUMERICAL);
  v1::WorkloadTrace* passed = eval->add_traces();
  passed->set_status(v1::PASSED);
  passed->set_speedup(1.3);
  const std::vector<Row> rows = RowsOf("exp_1", t);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].correct);
  EXPECT_EQ(rows[0].speedup, 0);
  EXPECT_EQ(Select(rows, {{"rows", "correct"}}).rows.size(), 0u);
  EXPECT_EQ(Select(rows, {{"rows", "failed"}}).rows.size(), 1u);
}

TEST(SelectTest, FiltersKeepWhatTheParametersSay) {
  const std::vector<Row> rows = {
      MakeRow("a", 1, 0, "COMPILE_ERROR"),      MakeRow("a", 1, 1, "PASSED", 0.5, true),
      MakeRow("a", 2, 0, "RUNTIME_ERROR"),      MakeRow("a", 2, 6, "TIMEOUT"),
      MakeRow("b", 3, 0, "PASSED", 2.0, false), MakeRow("b", 4, 1, "PASSED", 1.2, true)};
  Selection failed = Select(rows, {{"rows", "failed"}, {"max_turn", 4}});
  EXPECT_EQ(failed.candidates, 6);
  EXPECT_EQ(failed.rows.size(), 2u) << "turn 6 is past max_turn";
  Selection compile = Select(rows, {{"rows", "failed"}, {"statuses", {"COMPILE_ERROR"}}});
  ASSERT_EQ(compile.rows.size(), 1u);
  EXPECT_EQ(compile.rows[0].status, "COMPILE_ERROR");
  Selection correct = Select(rows, {{"rows", "correct"}, {"min_speedup", 1.0}});
  EXPECT_EQ(correct.rows.size(), 2u);
  Selection hopper =
      Select(rows, {{"rows", "correct"}, {"min_speedup", 1.0}, {"arch_features", "hopper"}});
  ASSERT_EQ(hopper.rows.size(), 1u);
  EXPECT_EQ(hopper.rows[0].trajectory_id, "tr_4");
  Selection tagged = Select(rows, {{"rows", "failed"}, {"prompt_tags", {"even"}}});
  EXPECT_EQ(tagged.rows.size(), 2u);
  EXPECT_EQ(tagged.counts["prompt_tag"]["even"], 2);
}

// 60 failed rows of one definition in three (status, turn) strata of 30,
// 20 and 10: a cap of 12 keeps 6, 4 and 2, the same ones every time, and
// another seed keeps others.
TEST(SelectTest, TheCapSamplesEachStratumInProportionDeterministically) {
  std::vector<Row> rows;
  for (int i = 0; i < 30; ++i) rows.push_back(MakeRow("a", i, 0, "COMPILE_ERROR"));
  for (int i = 30; i < 50; ++i) rows.push_back(MakeRow("a", i, 1, "COMPILE_ERROR"));
  for (int i = 50; i < 60; ++i) rows.push_back(MakeRow("a", i, 0, "RUNTIME_ERROR"));
  for (int i = 60; i < 65; ++i) rows.push_back(MakeRow("b", i, 0, "TIMEOUT"));
  const Json params = {{"rows", "failed"}, {"per_definition_cap", 12}, {"seed", "s1"}};
  Selection s = Select(rows, params);
  EXPECT_EQ(s.matched, 65);
  EXPECT_EQ(s.counts["definition"]["a"], 12);
  EXPECT_EQ(s.counts["definition"]["b"], 5) << "under the cap: all";
  EXPECT_EQ(s.counts["turn"]["1"], 4);
  EXPECT_EQ(s.counts["status"]["RUNTIME_ERROR"], 2);
  EXPECT_EQ(s.counts["status"]["COMPILE_ERROR"], 10);
  std::vector<Row> reversed(rows.rbegin(), rows.rend());
  Selection again = Select(reversed, params);
  ASSERT_EQ(again.rows.size(), s.rows.size());
  for (size_t i = 0; i < s.rows.size(); ++i) {
    EXPECT_EQ(again.rows[i].trajectory_id, s.rows[i].trajectory_id) << "order does not matter";
  }
  Json other_seed = params;
  other_seed["seed"] = "s2";
  Selection other = Select(rows, other_seed);
  std::set<std::string> a, b;
  for (const Row& r : s.rows) a.insert(r.trajectory_id);
  for (const Row& r : other.rows) b.insert(r.trajectory_id);
  EXPECT_NE(a, b);
  // A cap smaller than the strata: the largest remainders get the rows.
  Selection tiny = Select(rows, {{"rows", "failed"}, {"per_definition_cap", 2}});
  EXPECT_EQ(tiny.counts["definition"]["a"], 2);
}

}  // namespace
}  // namespace ptxbench::pipelines
