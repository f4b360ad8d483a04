#include "worker/simulated_worker.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

// Suite names start with "simulated_" so that `ctest -R simulated` selects them.
namespace ptxbench::worker {
namespace {

v1::Task EvalTask(int i) {
  v1::Task task;
  task.mutable_lease()->set_task_id(absl::StrCat("task-", i));
  task.mutable_lease()->set_lease_id(absl::StrCat("lease-", i));
  task.set_kind(v1::EVAL);
  task.mutable_eval()->set_kernel_source(absl::StrCat("__global__ void k", i, "() {}"));
  task.mutable_eval()->set_mode(v1::FULL);
  return task;
}

SimulatedWorkerHandler::Options Fast() {
  SimulatedWorkerHandler::Options o;
  o.seed = 3;
  o.worker_id = "sim-1";
  o.latency = absl::ZeroDuration();
  return o;
}

TEST(simulated_worker, AnswersEvalTasksWithSimulatedResults) {
  SimulatedWorkerHandler handler(Fast());
  std::atomic<bool> cancelled{false};
  v1::CompleteRequest out = handler.Run(EvalTask(1), cancelled);
  ASSERT_TRUE(out.has_eval());
  EXPECT_TRUE(out.eval().simulated());
  EXPECT_EQ(out.eval().worker_id(), "sim-1");
}

TEST(simulated_worker, FailureRateOneReportsInfra) {
  SimulatedWorkerHandler::Options o = Fast();
  o.faults.failure_rate = 1.0;
  SimulatedWorkerHandler handler(o);
  std::atomic<bool> cancelled{false};
  v1::CompleteRequest out = handler.Run(EvalTask(1), cancelled);
  ASSERT_TRUE(out.has_failure());
  EXPECT_EQ(out.failure().failure_class(), v1::INFRA);
}

TEST(simulated_worker, CrashRateDrawsPerLease) {
  SimulatedWorkerHandler::Options o = Fast();
  o.faults.crash_rate = 0.5;
  int crashes = 0;
  o.faults.crash = [&crashes] { ++crashes; };
  SimulatedWorkerHandler handler(o);
  std::atomic<bool> cancelled{false};
  for (int i = 0; i < 200; ++i) handler.Run(EvalTask(i), cancelled);
  EXPECT_GT(crashes, 60);
  EXPECT_LT(crashes, 140);
  // Reproducible: the same leases crash again.
  int again = 0;
  o.faults.crash = [&again] { ++again; };
  SimulatedWorkerHandler second(o);
  for (int i = 0; i < 200; ++i) second.Run(EvalTask(i), cancelled);
  EXPECT_EQ(again, crashes);
}

TEST(simulated_worker, CancelledDuringLatencyReturnsEarly) {
  SimulatedWorkerHandler::Options o = Fast();
  o.latency = absl::Seconds(30);
  SimulatedWorkerHandler handler(o);
  std::atomic<bool> cancelled{true};
  absl::Time start = absl::Now();
  v1::CompleteRequest out = handler.Run(EvalTask(1), cancelled);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_TRUE(out.has_failure());
}

TEST(simulated_worker, CapabilitiesDescribeSimulatedH200s) {
  v1::Capabilities caps = SimulatedWorkerCapabilities(2, 4);
  ASSERT_EQ(caps.gpus_size(), 2);
  EXPECT_EQ(caps.gpus(1).index(), 1);
  EXPECT_EQ(caps.gpus(0).model(), "Simulated H200");
  EXPECT_EQ(caps.gpus(0).sm_arch(), "sm_90");
  EXPECT_TRUE(caps.gpus(0).healthy());
  EXPECT_EQ(caps.slots(), 4);
  EXPECT_TRUE(caps.simulated());
}

}  // namespace
}  // namespace ptxbench::worker
