#include "executor/daemon_flags.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "gtest/gtest.h"

ABSL_DECLARE_FLAG(std::string, scheduler);
ABSL_DECLARE_FLAG(std::string, name);
ABSL_DECLARE_FLAG(int, slots);
ABSL_DECLARE_FLAG(std::string, status_listen);
ABSL_DECLARE_FLAG(int, stats_interval_s);
ABSL_DECLARE_FLAG(bool, simulate);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(std::optional<int>, latency_ms);
ABSL_DECLARE_FLAG(double, failure_rate);
ABSL_DECLARE_FLAG(double, crash_rate);

// Suite names start with "executor_" so that `ctest -R executor` selects them.
namespace ptxbench::executor {
namespace {

const DaemonDefaults kWorker{.name = "host-1", .latency = absl::Milliseconds(20)};
const DaemonDefaults kGateway{.name = "gateway", .latency = absl::Milliseconds(50)};

TEST(executor_daemon_flags, UnsetFlagsTakeEachDaemonsDefaults) {
  absl::FlagSaver saver;
  unsetenv("PTXBENCH_SCHEDULER");
  const DaemonFlags worker = ReadDaemonFlags(kWorker);
  EXPECT_EQ(worker.scheduler, "127.0.0.1:50051");
  EXPECT_EQ(worker.name, "host-1");
  EXPECT_EQ(worker.latency, absl::Milliseconds(20));
  EXPECT_EQ(worker.slots, 0);
  EXPECT_EQ(worker.status_listen, "");
  EXPECT_EQ(worker.stats_interval, absl::Seconds(30));
  EXPECT_FALSE(worker.simulate);
  EXPECT_EQ(worker.seed, 0u);
  EXPECT_EQ(worker.faults.failure_rate, 0);
  EXPECT_EQ(worker.faults.crash_rate, 0);
  const DaemonFlags gateway = ReadDaemonFlags(kGateway);
  EXPECT_EQ(gateway.name, "gateway");
  EXPECT_EQ(gateway.latency, absl::Milliseconds(50));
  EXPECT_TRUE(SimulationProblem(worker).ok());
}

TEST(executor_daemon_flags, GivenFlagsWinOverTheDefaults) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_scheduler, "sched:1234");
  absl::SetFlag(&FLAGS_name, "node7");
  absl::SetFlag(&FLAGS_slots, 3);
  absl::SetFlag(&FLAGS_status_listen, "9100");
  absl::SetFlag(&FLAGS_stats_interval_s, 0);
  absl::SetFlag(&FLAGS_simulate, true);
  absl::SetFlag(&FLAGS_seed, uint64_t{42});
  absl::SetFlag(&FLAGS_latency_ms, 0);  // given as 0: no latency, not the default
  absl::SetFlag(&FLAGS_failure_rate, 0.25);
  absl::SetFlag(&FLAGS_crash_rate, 0.5);
  const DaemonFlags f = ReadDaemonFlags(kGateway);
  EXPECT_EQ(f.scheduler, "sched:1234");
  EXPECT_EQ(f.name, "node7");
  EXPECT_EQ(f.slots, 3);
  EXPECT_EQ(f.status_listen, "9100");
  EXPECT_EQ(f.stats_interval, absl::ZeroDuration());
  EXPECT_TRUE(f.simulate);
  EXPECT_EQ(f.seed, 42u);
  EXPECT_EQ(f.latency, absl::ZeroDuration());
  EXPECT_EQ(f.faults.failure_rate, 0.25);
  EXPECT_EQ(f.faults.crash_rate, 0.5);
  EXPECT_TRUE(SimulationProblem(f).ok());
}

TEST(executor_daemon_flags, SchedulerFallsBackToTheEnvironment) {
  absl::FlagSaver saver;
  setenv("PTXBENCH_SCHEDULER", "env-host:7", 1);
  EXPECT_EQ(ReadDaemonFlags(kWorker).scheduler, "env-host:7");
  unsetenv("PTXBENCH_SCHEDULER");
}

TEST(executor_daemon_flags, SimulationProblemNamesTheFlag) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_latency_ms, -1);
  EXPECT_EQ(SimulationProblem(ReadDaemonFlags(kWorker)),
            absl::InvalidArgumentError("--latency-ms must not be negative"));
  absl::SetFlag(&FLAGS_latency_ms, std::nullopt);
  absl::SetFlag(&FLAGS_failure_rate, 1.5);
  EXPECT_EQ(SimulationProblem(ReadDaemonFlags(kWorker)),
            absl::InvalidArgumentError("--failure-rate must be in [0, 1]"));
  absl::SetFlag(&FLAGS_failure_rate, 1.0);
  absl::SetFlag(&FLAGS_crash_rate, -0.1);
  EXPECT_EQ(SimulationProblem(ReadDaemonFlags(kWorker)),
            absl::InvalidArgumentError("--crash-rate must be in [0, 1]"));
}

}  // namespace
}  // namespace ptxbench::executor
