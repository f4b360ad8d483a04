// State-machine tests: failure classes, backoff, poison, cancel, drain,
// retry and extend.
#include "scheduler/state/core.h"

#include <gmock/gmock.h>

#include "absl/strings/str_cat.h"
#include "experiment_spec/limits.h"
#include "scheduler/state/core_test_util.h"

namespace ptxbench::scheduler {

using experiment_spec::ExpandedExperiment;

namespace {

namespace v1 = ::ptxbench::v1;

using CoreFailureTest = CoreFixture;

// Advances the clock by `d` and runs the timers.
#define ADVANCE(d)             \
  do {                         \
    clock_.Advance(d);         \
    ASSERT_TRUE(core_->Tick().ok()); \
  } while (0)

TEST_F(CoreFailureTest, InfraFailuresBackOffExponentially) {
  Submit(MakeExperiment("exp", 1, 3));
  std::string gw = RegisterGateway();
  const absl::Duration expected[] = {absl::Seconds(1), absl::Seconds(2), absl::Seconds(4),
                                     absl::Seconds(8)};
  for (absl::Duration wait : expected) {
    ASSERT_TRUE(Fail(MustLease(gw), v1::INFRA).ok());
    ADVANCE(wait - absl::Milliseconds(1));
    EXPECT_TRUE(NothingFor(gw)) << "leasable before its backoff of " << wait;
    ADVANCE(absl::Milliseconds(1));
  }
  // The fifth infrastructure failure (max_infra_failures = 5) ends it.
  ASSERT_TRUE(Fail(MustLease(gw), v1::INFRA).ok());
  EXPECT_EQ(TrajectoriesIn(v1::FAILED), 1);
  EXPECT_EQ(Count("SELECT failure_class FROM trajectories"), v1::INFRA);
  EXPECT_EQ(Count("SELECT turns_completed FROM trajectories"), 0) << "infra never counts a turn";
}

TEST_F(CoreFailureTest, ApiFailureHonoursRetryAfter) {
  Submit(MakeExperiment("exp", 1, 3));
  std::string gw = RegisterGateway();
  ASSERT_TRUE(Fail(MustLease(gw), v1::MODEL_API, /*retry_after_ms=*/5000).ok());
  ADVANCE(absl::Milliseconds(4999));
  EXPECT_TRUE(NothingFor(gw));
  ADVANCE(absl::Milliseconds(1));
  EXPECT_EQ(MustLease(gw).attempt(), 2);
}

TEST_F(CoreFailureTest, TerminalFailureEndsTheTrajectory) {
  Submit(MakeExperiment("exp", 1, 3));
  std::string gw = RegisterGateway();
  ASSERT_TRUE(Fail(MustLease(gw), v1::TERMINAL).ok());
  EXPECT_EQ(TrajectoriesIn(v1::FAILED), 1);
  EXPECT_EQ(Count("SELECT failure_class FROM trajectories"), v1::TERMINAL);
  EXPECT_TRUE(NothingFor(gw));
}

TEST_F(CoreFailureTest, PoisonedAfterRepeatedExecutorDeaths) {
  Submit(MakeExperiment("exp", 1, 3));
  std::string gw = RegisterGateway();
  for (int death = 1; death <= 3; ++death) {
    MustLease(gw);  // ... and the executor dies holding it
    ADVANCE(absl::Seconds(31));
    ADVANCE(absl::Minutes(2));  // past any backoff
  }
  EXPECT_TRUE(NothingFor(gw));
  EXPECT_EQ(TrajectoriesIn(v1::FAILED), 1);
  EXPECT_EQ(Count("SELECT failure_class FROM trajectories"), v1::INFRA);
  EXPECT_EQ(TasksIn(TaskState::kPoisoned), 1) << "task POISONED";
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories WHERE reason LIKE 'poisoned:%died 3 times%'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'task.expired'"), 2);
}

TEST_F(CoreFailureTest, EvalInfraErrorIsRetriedNotShownToTheModel) {
  Submit(MakeExperiment("exp", 1, 3));
  std::string gw = RegisterGateway(), wk = RegisterWorker();
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  ASSERT_TRUE(CompleteEval(MustLease(wk), v1::INFRA_ERROR, 0).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM turns WHERE feedback_blob IS NOT NULL"), 0);
  ADVANCE(absl::Seconds(1));
  EXPECT_EQ(MustLease(wk).attempt(), 2);
}

TEST_F(CoreFailureTest, CancelTrajectoryRevokesItsLease) {
  ExpandedExperiment x = MakeExperiment("exp", 2, 3);
  Submit(x);
  std::string gw = RegisterGateway();
  v1::Task task = MustLease(gw);
  auto n = core_->CancelTrajectory(task.trajectory_id());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(CompleteLlm(task).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(TrajectoriesIn(v1::CANCELLED), 1);
  EXPECT_EQ(*core_->CancelTrajectory(task.trajectory_id()), 0) << "already terminal";
  EXPECT_EQ(core_->CancelTrajectory("tr_nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CoreFailureTest, CancelExperimentStopsAllItsWork) {
  std::string exp = Submit(MakeExperiment("exp", 4, 3));
  std::string other = Submit(MakeExperiment("other", 1, 3));
  std::string gw = RegisterGateway();
  v1::Task held = MustLease(gw);
  ASSERT_EQ(held.experiment_id(), exp) << "equal priority: the older experiment first";
  auto n = core_->CancelExperiment(exp);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 4);
  EXPECT_EQ(CompleteLlm(held).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(MustLease(gw).experiment_id(), other);
  EXPECT_TRUE(NothingFor(gw));
  EXPECT_EQ(TasksIn(TaskState::kCancelled), 4);
  EXPECT_EQ(TrajectoriesIn(v1::CANCELLED), 4);
}

// Cancelling an experiment is the cancel transition of each live
// trajectory: ended ones stay as they are, each cancel is logged.
TEST_F(CoreFailureTest, CancelExperimentCancelsEachLiveTrajectory) {
  std::string exp = Submit(MakeExperiment("exp", 3, 1));
  std::string gw = RegisterGateway();
  ASSERT_TRUE(CompleteLlm(MustLease(gw), "no code here").ok());  // its only turn
  ASSERT_EQ(TrajectoriesIn(v1::LIMITS_EXCEEDED), 1);
  auto n = core_->CancelExperiment(exp);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 2);
  EXPECT_EQ(TrajectoriesIn(v1::LIMITS_EXCEEDED), 1) << "an ended trajectory stays as it is";
  EXPECT_EQ(TrajectoriesIn(v1::CANCELLED), 2);
  EXPECT_EQ(TasksIn(TaskState::kCancelled), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'trajectory.cancelled'"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories WHERE reason = 'cancelled by user'"), 2);
  auto again = core_->CancelExperiment(exp);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0) << "nothing live is left";
}

TEST_F(CoreFailureTest, DrainingExecutorTakesNothingNew) {
  Submit(MakeExperiment("exp", 3, 3));
  std::string gw = RegisterGateway();
  v1::Task held = MustLease(gw);
  ASSERT_TRUE(core_->Drain(gw).ok());
  EXPECT_TRUE(core_->IsDraining(gw));
  EXPECT_TRUE(NothingFor(gw));
  ASSERT_TRUE(CompleteLlm(held).ok()) << "finishes what it holds";
  EXPECT_EQ(core_->Drain("gw_nope").code(), absl::StatusCode::kNotFound);
  auto list = core_->ListExecutors();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].status(), "draining");
}

// An executor that says goodbye holding leases (their answers were lost on
// the way, or never accepted) hands them back at once, as no failure, and
// takes nothing more; it shows "stopped", also after a restart.
TEST_F(CoreFailureTest, LeaveHandsBackWhatItHoldsAsNoFailure) {
  Submit(MakeExperiment("exp", 3, 3));
  std::string gw = RegisterGateway();
  MustLease(gw);
  MustLease(gw);
  auto released = core_->Leave(gw);
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_EQ(*released, 2);
  EXPECT_EQ(TasksIn(TaskState::kLeased), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM tasks WHERE deaths > 0 OR infra_failures > 0"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'task.released'"), 2);
  EXPECT_TRUE(NothingFor(gw)) << "a stopped executor takes nothing";
  ASSERT_TRUE(core_->Tick().ok());
  std::string next = RegisterGateway();
  int attempts = 0;
  for (int i = 0; i < 3; ++i) attempts += MustLease(next).attempt();
  EXPECT_EQ(attempts, 2 + 2 + 1) << "the two released ones are leasable again at once";
  EXPECT_EQ(*core_->Leave(gw), 0) << "idempotent";
  EXPECT_EQ(*core_->Leave("gw_unknown"), 0);
  ASSERT_TRUE(core_->Drain(gw).ok());
  Restart();
  auto list = core_->ListExecutors();
  ASSERT_TRUE(list.ok()) << list.status();
  for (const v1::ExecutorInfo& e : *list) {
    EXPECT_EQ(e.status(), e.executor_id() == gw ? "stopped" : "active") << e.executor_id();
  }
}

// A worker restarted with a fixed --executor-id registers again after its
// goodbye: it is running again. An admin's drain is kept instead.
TEST_F(CoreFailureTest, OneThatLeftAndRegistersAgainIsActiveButADrainStays) {
  Submit(MakeExperiment("exp", 2, 3));
  ptxbench::v1::RegisterRequest again;
  again.set_kind(ptxbench::v1::GATEWAY);
  again.set_name("gw");
  again.mutable_capabilities()->set_serves_any_model(true);
  again.mutable_capabilities()->set_slots(8);
  again.set_executor_id(RegisterGateway());
  ASSERT_TRUE(core_->Leave(again.executor_id()).ok());
  ASSERT_TRUE(core_->Register(again).ok());
  Restart();  // what is stored says the same
  MustLease(again.executor_id());  // leases again
  auto list = core_->ListExecutors();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(list->front().status(), "active");

  ASSERT_TRUE(core_->Drain(again.executor_id()).ok());
  ASSERT_TRUE(core_->Register(again).ok());
  Restart();
  EXPECT_TRUE(NothingFor(again.executor_id())) << "drained by an admin";
  list = core_->ListExecutors();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->front().status(), "draining");
}

TEST_F(CoreFailureTest, ListExecutorsNamesTheTasksEachHolds) {
  Submit(MakeExperiment("exp", 2, 3));
  std::string gw = RegisterGateway();
  std::string wk = RegisterWorker();
  v1::Task llm = MustLease(gw);
  ASSERT_TRUE(CompleteLlm(llm).ok());
  v1::Task eval = MustLease(wk);
  v1::Task second = MustLease(gw);
  clock_.Advance(absl::Seconds(5));  // the list reads the clock; deadlines stay as granted

  auto list = core_->ListExecutors();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  for (const v1::ExecutorInfo& info : *list) {
    const v1::Task& held = info.executor_id() == wk ? eval : second;
    SCOPED_TRACE(info.executor_id());
    ASSERT_EQ(info.held_size(), 1);
    EXPECT_EQ(info.leases(), 1);
    EXPECT_EQ(info.held(0).task_id(), held.lease().task_id());
    EXPECT_EQ(info.held(0).kind(), held.kind());
    EXPECT_EQ(info.held(0).trajectory_id(), held.trajectory_id());
    EXPECT_EQ(info.held(0).experiment_id(), held.experiment_id());
    EXPECT_EQ(info.held(0).turn(), held.turn());
    EXPECT_EQ(info.held(0).attempt(), 1);
    EXPECT_FALSE(info.held(0).model().empty());
    EXPECT_FALSE(info.held(0).definition().empty());
    EXPECT_EQ(info.held(0).lease_deadline_unix_ms(), held.lease_deadline_unix_ms());
  }
  EXPECT_EQ(eval.trajectory_id(), llm.trajectory_id()) << "the eval of the answered turn";

  ASSERT_TRUE(CompleteEval(eval, v1::PASSED, 2.0).ok());
  list = core_->ListExecutors();
  ASSERT_TRUE(list.ok()) << list.status();
  for (const v1::ExecutorInfo& info : *list) {
    EXPECT_EQ(info.held_size(), info.executor_id() == wk ? 0 : 1) << info.executor_id();
  }
}

TEST_F(CoreFailureTest, RetryResumesFailedTrajectoriesOfTheClass) {
  std::string exp = Submit(MakeExperiment("exp", 2, 3));
  std::string gw = RegisterGateway();
  ASSERT_TRUE(Fail(MustLease(gw), v1::TERMINAL).ok());
  options_.max_api_failures = 1;
  Restart();
  ASSERT_TRUE(Fail(MustLease(gw), v1::MODEL_API).ok());
  EXPECT_EQ(TrajectoriesIn(v1::FAILED), 2);

  EXPECT_EQ(*core_->Retry(exp, v1::RETRY_INFRA), 0);
  EXPECT_EQ(*core_->Retry(exp, v1::RETRY_API), 1);
  EXPECT_EQ(TrajectoriesIn(v1::AWAITING_MODEL), 1);
  MustLease(gw);
  EXPECT_EQ(*core_->Retry(exp, v1::RETRY_ALL_FAILED), 1);
  MustLease(gw);
  EXPECT_EQ(TrajectoriesIn(v1::FAILED), 0);
  EXPECT_EQ(core_->Retry(exp, v1::RETRY_SCOPE_UNSPECIFIED).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(CoreFailureTest, ExtendResumesTrajectoriesThatHitTheLimit) {
  std::string exp = Submit(MakeExperiment("exp", 1, 1));
  std::string gw = RegisterGateway(), wk = RegisterWorker();
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  ASSERT_TRUE(CompleteEval(MustLease(wk), v1::PASSED, 1.0).ok());
  EXPECT_EQ(TrajectoriesIn(v1::LIMITS_EXCEEDED), 1);
  EXPECT_EQ(core_->Extend(exp, 1).status().code(), absl::StatusCode::kInvalidArgument);
  // The spec's turn limit holds for a raised limit too.
  absl::StatusOr<int64_t> past = core_->Extend(exp, experiment_spec::kMaxTurns + 1);
  EXPECT_EQ(past.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(past.status().message()),
              ::testing::HasSubstr(absl::StrCat("at most ", experiment_spec::kMaxTurns)));
  EXPECT_EQ(*core_->Extend(exp, 3), 1);
  v1::Task next = MustLease(gw);
  EXPECT_EQ(next.turn(), 1);
  EXPECT_EQ(Count("SELECT num_turns FROM trajectories"), 3);
}

}  // namespace
}  // namespace ptxbench::scheduler
