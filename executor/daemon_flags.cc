#include "executor/daemon_flags.h"

#include <optional>
#include <string>

#include "absl/flags/flag.h"
#include "executor/command_line.h"

// Each help text says what the flag is in either daemon where they differ;
// `ptxbench up` passes several (cli/up/up.cc).
ABSL_FLAG(std::string, scheduler, "",
          "Scheduler address HOST:PORT (default: $PTXBENCH_SCHEDULER, else 127.0.0.1:50051)");
ABSL_FLAG(std::string, name, "",
          "Name shown by the scheduler (default: a worker's host name; a gateway's \"gateway\")");
ABSL_FLAG(int, slots, 0,
          "Tasks at once (default: a worker's two evaluations per GPU, so one compiles while "
          "another runs on each GPU, compile-only one per CPU core, simulated 4; a gateway's 256 "
          "model calls on one event loop, simulated 16, a thread each)");
ABSL_FLAG(std::string, status_listen, "",
          "Serve GET /healthz and /metrics (Prometheus) on [HOST:]PORT (--status-listen; a bare "
          "PORT binds 127.0.0.1; default: off; docs/OBSERVABILITY.md)");
ABSL_FLAG(int, stats_interval_s, 30,
          "Seconds between structured stats log lines: a worker's with each GPU's duty cycle, a "
          "gateway's one per model (--stats-interval-s; 0: none)");
ABSL_FLAG(bool, simulate, false,
          "Simulate the work: a worker returns deterministic synthetic evaluations instead of "
          "compiling and running kernels, a gateway answers with a simulated model instead of "
          "calling providers");
ABSL_FLAG(uint64_t, seed, 0,
          "Seed of the simulated results (a worker's) or answers (a gateway's) and of the "
          "injected faults; on a worker with GPUs, the root of the input seeds (0: a fresh secret "
          "seed per evaluation, shown in its traces once it is over; one set here reproduces "
          "evaluations and is never shown)");
ABSL_FLAG(std::optional<int>, latency_ms, std::nullopt,
          "Simulated time of a task, milliseconds (--latency-ms; default: a worker's evaluation "
          "20, a gateway's model call 50)");
ABSL_FLAG(double, failure_rate, 0.0,
          "Probability that a simulated task fails: a worker's with an INFRA failure, a "
          "gateway's with a MODEL_API one, retry after 100 ms (--failure-rate)");
ABSL_FLAG(double, crash_rate, 0.0,
          "Probability that the process exits abruptly (status 70) right after leasing a "
          "task (--crash-rate)");

namespace ptxbench::executor {

DaemonFlags ReadDaemonFlags(const DaemonDefaults& defaults) {
  DaemonFlags f;
  f.scheduler = absl::GetFlag(FLAGS_scheduler);
  if (f.scheduler.empty()) f.scheduler = DefaultSchedulerAddress();
  f.name = absl::GetFlag(FLAGS_name);
  if (f.name.empty()) f.name = defaults.name;
  f.slots = absl::GetFlag(FLAGS_slots);
  f.status_listen = absl::GetFlag(FLAGS_status_listen);
  f.stats_interval = absl::Seconds(absl::GetFlag(FLAGS_stats_interval_s));
  f.simulate = absl::GetFlag(FLAGS_simulate);
  f.seed = absl::GetFlag(FLAGS_seed);
  const std::optional<int> latency_ms = absl::GetFlag(FLAGS_latency_ms);
  f.latency = latency_ms.has_value() ? absl::Milliseconds(*latency_ms) : defaults.latency;
  f.faults.failure_rate = absl::GetFlag(FLAGS_failure_rate);
  f.faults.crash_rate = absl::GetFlag(FLAGS_crash_rate);
  return f;
}

absl::Status SimulationProblem(const DaemonFlags& flags) {
  if (flags.latency < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--latency-ms must not be negative");
  }
  if (!(flags.faults.failure_rate >= 0 && flags.faults.failure_rate <= 1)) {
    return absl::InvalidArgumentError("--failure-rate must be in [0, 1]");
  }
  if (!(flags.faults.crash_rate >= 0 && flags.faults.crash_rate <= 1)) {
    return absl::InvalidArgumentError("--crash-rate must be in [0, 1]");
  }
  return absl::OkStatus();
}

}  // namespace ptxbench::executor
