#include "worker/worker_metrics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::worker {
namespace {

using ::testing::HasSubstr;
namespace v1 = ::ptxbench::v1;

TEST(worker_metrics, DutyCycleIsTimedWorkOverHeldTime) {
  WorkerMetrics m({{0, "H200"}, {1, "H200"}}, {});
  EXPECT_THAT(m.Prometheus(),
              HasSubstr("ptxbench_worker_gpu_duty_cycle{gpu=\"1\",model=\"H200\"} 0\n"));
  m.GpuHeld(0, absl::Seconds(4));
  m.GpuTimedWork(0, absl::Seconds(3));
  const std::string page = m.Prometheus();
  EXPECT_THAT(page, HasSubstr("ptxbench_worker_gpu_held_seconds_total{gpu=\"0\",model=\"H200\"} 4\n"));
  EXPECT_THAT(page,
              HasSubstr("ptxbench_worker_gpu_timed_work_seconds_total{gpu=\"0\",model=\"H200\"} 3\n"));
  EXPECT_THAT(page, HasSubstr("ptxbench_worker_gpu_duty_cycle{gpu=\"0\",model=\"H200\"} 0.75\n"));
}

TEST(worker_metrics, OutcomesCountedByStatus) {
  sandbox::Protections protections;
  protections.active = {"seccomp", "namespaces"};
  protections.warnings = {"no cgroup v2"};
  WorkerMetrics m({}, protections);
  v1::CompleteRequest passed;
  passed.mutable_eval()->set_status(v1::PASSED);
  m.Reported(passed);
  m.Reported(passed);
  m.Reported(v1::CompleteRequest());  // a failure report: no evaluation
  m.RunnerCrashed();
  m.Compiled(absl::Milliseconds(30));
  const std::string page = m.Prometheus();
  EXPECT_THAT(page, HasSubstr("ptxbench_worker_evaluations_total{status=\"PASSED\"} 2\n"));
  EXPECT_THAT(page, HasSubstr("ptxbench_worker_evaluations_total{status=\"TIMEOUT\"} 0\n"));
  EXPECT_THAT(page, HasSubstr("ptxbench_worker_failure_reports_total 1\n"));
  EXPECT_THAT(page, HasSubstr("ptxbench_worker_runner_crashes_total 1\n"));
  EXPECT_THAT(page, HasSubstr("ptxbench_worker_compile_seconds_count 1\n"));
  EXPECT_THAT(page, HasSubstr("ptxbench_worker_sandbox_protection{protection=\"seccomp\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("ptxbench_worker_sandbox_warnings 1\n"));
  EXPECT_THAT(page, ::testing::Not(HasSubstr("EVAL_STATUS_UNSPECIFIED")));
}

}  // namespace
}  // namespace ptxbench::worker
