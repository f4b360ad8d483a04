#include "worker/worker_metrics.h"

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::worker {
namespace {

using ::testing::HasSubstr;
namespace v1 = ::ptxbench::v1;

// Held time is the worker's wall time with the GPU in service; the duty
// cycle is the share of it spent in timed work.
TEST(worker_metrics, DutyCycleIsTimedWorkOverHeldTime) {
  FakeClock clock;
  WorkerMetrics m({{0, "H200"}, {1, "H200"}}, {}, &clock);
  EXPECT_THAT(m.Prometheus(),
              HasSubstr("ptxbench_worker_gpu_duty_cycle{gpu=\"1\",model=\"H200\"} 0\n"));
  clock.Advance(absl::Seconds(4));
  m.GpuBusy(0, absl::Seconds(3.5));
  m.GpuTimedWork(0, absl::Seconds(3));
  std::string page = m.Prometheus();
  const auto sample = [](const char* name, const char* gpu, const char* value) {
    return absl::StrCat("ptxbench_worker_gpu_", name, "{gpu=\"", gpu, "\",model=\"H200\"} ", value,
                        "\n");
  };
  EXPECT_THAT(page, HasSubstr(sample("held_seconds_total", "0", "4")));
  EXPECT_THAT(page, HasSubstr(sample("held_seconds_total", "1", "4")));
  EXPECT_THAT(page, HasSubstr(sample("busy_seconds_total", "0", "3.5")));
  EXPECT_THAT(page, HasSubstr(sample("timed_work_seconds_total", "0", "3")));
  EXPECT_THAT(page, HasSubstr(sample("duty_cycle", "0", "0.75")));
  EXPECT_THAT(page, HasSubstr(sample("duty_cycle", "1", "0")));

  // A GPU taken out of service stops counting held time.
  m.GpuRetired(1);
  clock.Advance(absl::Seconds(2));
  page = m.Prometheus();
  EXPECT_THAT(page, HasSubstr(sample("held_seconds_total", "0", "6")));
  EXPECT_THAT(page, HasSubstr(sample("held_seconds_total", "1", "4")));
  EXPECT_THAT(page, HasSubstr(sample("duty_cycle", "0", "0.5")));
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
