// Held-out workloads in the state machine (docs/FORMATS.md, "Held-out
// workloads"): evaluations run them, the model's feedback, the loop's
// target and an agent's reply never see them, the turn's verdict does.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "scheduler/state/core.h"
#include "scheduler/state/core_test_util.h"
#include "storage/blob_store.h"
#include "verdict/verdict.h"

namespace ptxbench::scheduler {
namespace {

namespace v1 = ::ptxbench::v1;
using experiment_spec::ExpandedExperiment;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

using CoreHeldOutTest = CoreFixture;

// Three workloads, the last ("w-held", M=4321) held out; target 1.5x.
ExpandedExperiment HeldOutExperiment(const std::string& name) {
  ExpandedExperiment x = MakeExperiment(name, 1, 3);
  x.trajectories[0].workloads = {"w-a", "w-b", "w-held"};
  x.trajectories[0].held_out = {"w-held"};
  return x;
}

// A result where the shown workloads pass at 2x and 3x and the held-out
// one is `held_status` (speedup 0.5 when it passed).
v1::CompleteRequest Result(v1::CompleteRequest c, v1::EvalStatus held_status) {
  v1::EvalResult* r = c.mutable_eval();
  auto add = [r](const std::string& uuid, int64_t m, v1::EvalStatus status, double speedup) {
    v1::WorkloadTrace* t = r->add_traces();
    t->set_workload_uuid(uuid);
    (*t->mutable_axes())["M"] = m;
    t->set_status(status);
    t->set_speedup(speedup);
    if (status != v1::PASSED) t->add_errors("output C: 4321 elements wrong at M=4321");
  };
  add("w-a", 70, v1::PASSED, 2.0);
  add("w-b", 232, v1::PASSED, 3.0);
  add("w-held", 4321, held_status, held_status == v1::PASSED ? 0.5 : 0);
  verdict::Summarize(*r);
  return c;
}

TEST_F(CoreHeldOutTest, TheModelIsJudgedOnWhatItIsShownAndTheTurnOnEverything) {
  Submit(HeldOutExperiment("held-1"));
  const std::string gw = RegisterGateway(), wk = RegisterWorker();
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  const v1::Task eval = MustLease(wk);
  // The worker runs all three and knows which one is held out.
  EXPECT_THAT(eval.eval().workload_uuids(), ElementsAre("w-a", "w-b", "w-held"));
  EXPECT_THAT(eval.eval().held_out_workload_uuids(), ElementsAre("w-held"));
  ASSERT_TRUE(core_->Complete(Result(ReportOn(eval), v1::INCORRECT_NUMERICAL)).ok());

  // The turn: incorrect (a workload failed), but correct on what was shown.
  EXPECT_EQ(Count("SELECT correct FROM turns"), 0);
  EXPECT_EQ(Count("SELECT shown_correct FROM turns"), 1);
  // The feedback: the shown workloads only, and their verdict (the 1.5x
  // target met: min 2x), so the model learns nothing of the held-out one.
  const std::string feedback = *storage::GetBlob(
      *db_, QueryText(*db_, "SELECT feedback_blob FROM turns WHERE feedback_blob IS NOT NULL"));
  EXPECT_THAT(feedback, HasSubstr("achieved"));
  EXPECT_THAT(feedback, Not(HasSubstr("4321")));
  EXPECT_THAT(feedback, Not(HasSubstr("w-held")));
  // The loop ends as the feedback said (target met), and the trajectory is
  // not correct: found out by the held-out workload.
  EXPECT_EQ(TrajectoriesIn(v1::SUBMITTED), 1);
  EXPECT_EQ(Count("SELECT correct FROM trajectories"), 0);
  // The stored result keeps all three, for the researcher.
  v1::EvalResult stored;
  ASSERT_TRUE(stored.ParseFromString(*storage::GetBlob(
      *db_, QueryText(*db_, "SELECT eval_blob FROM turns WHERE eval_blob IS NOT NULL"))));
  EXPECT_EQ(stored.traces_size(), 3);
  // Kept across a restart (the column).
  Restart();
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories WHERE held_out = 'w-held'"), 1);
}

TEST_F(CoreHeldOutTest, AHeldOutWorkloadSetsNoMinimumOfTheLoopsTarget) {
  // Passed everywhere, but 0.5x on the held-out workload: correct, and the
  // loop's target (1.5x) is met on the shown ones (min 2x); the turn's
  // minimum over everything is 0.5x.
  Submit(HeldOutExperiment("held-2"));
  const std::string gw = RegisterGateway(), wk = RegisterWorker();
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  ASSERT_TRUE(core_->Complete(Result(ReportOn(MustLease(wk)), v1::PASSED)).ok());
  EXPECT_EQ(Count("SELECT correct FROM turns"), 1);
  EXPECT_EQ(Count("SELECT round(speedup * 10) FROM turns"), 5);
  EXPECT_EQ(TrajectoriesIn(v1::SUBMITTED), 1);
}

}  // namespace
}  // namespace ptxbench::scheduler
