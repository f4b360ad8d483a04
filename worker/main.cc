// ptxbench-worker: leases evaluation tasks from the scheduler and reports
// results. Without --simulate it evaluates compile-only (build, resources,
// PTX census, library check) until GPU evaluation lands; with --simulate it
// returns deterministic synthetic results for tests and benchmarks.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "common/log.h"
#include "executor/command_line.h"
#include "executor/executor_runner.h"
#include "executor/signals.h"
#include "common/data_dir.h"
#include "worker/compile_only.h"
#include "worker/gpu/device_info.h"
#include "worker/simulated_worker.h"

ABSL_FLAG(std::string, scheduler, "",
          "Scheduler address HOST:PORT (default: $PTXBENCH_SCHEDULER, else 127.0.0.1:50051)");
ABSL_FLAG(bool, simulate, false,
          "Simulate evaluations instead of compiling and running kernels");
ABSL_FLAG(std::string, cache_dir, "",
          "Build cache folder (default: $XDG_CACHE_HOME or ~/.cache, /ptxbench/builds)");
ABSL_FLAG(std::vector<std::string>, dataset, {},
          "extra FlashInfer-Trace dataset folders (comma-separated)");
ABSL_FLAG(std::string, name, "", "Worker name shown by the scheduler (default: host name)");
ABSL_FLAG(int, slots, 4, "Evaluations run at once");
ABSL_FLAG(uint64_t, seed, 0, "Seed of the simulated results and injected faults");
ABSL_FLAG(int, latency_ms, 20, "Simulated evaluation time, milliseconds (--latency-ms)");
ABSL_FLAG(double, failure_rate, 0.0,
          "Probability that a task reports an INFRA failure (--failure-rate)");
ABSL_FLAG(double, crash_rate, 0.0,
          "Probability that the process exits abruptly (status 70) right after leasing a "
          "task (--crash-rate)");
ABSL_FLAG(int, gpus, 1, "Simulated GPUs (\"Simulated H200\", sm_90); 0: compile-only");

namespace {

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptxbench-worker: %s\n", message.c_str());
  return ptxbench::executor::kUsageExitCode;
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "worker";
  return host;
}

std::string DefaultCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::string base = xdg != nullptr && *xdg != '\0' ? xdg
                     : home != nullptr            ? std::string(home) + "/.cache"
                                                  : "/tmp";
  return base + "/ptxbench/builds";
}

// The real worker, for now compile-only: it registers no GPU, so the
// scheduler sends it only `eval: compile-only` tasks, and says plainly why.
int RunCompileOnlyWorker() {
  std::string scheduler = absl::GetFlag(FLAGS_scheduler);
  if (scheduler.empty()) scheduler = ptxbench::executor::DefaultSchedulerAddress();
  std::string name = absl::GetFlag(FLAGS_name);
  if (name.empty()) name = HostName();
  const int slots = absl::GetFlag(FLAGS_slots);
  if (slots < 1) return UsageError("--slots must be at least 1");

  absl::StatusOr<ptxbench::gpu::GpuInventory> inventory = ptxbench::gpu::DiscoverGpus();
  if (!inventory.ok()) {
    ptxbench::LogWarning("GPU discovery failed", {{"error", inventory.status().ToString()}});
  } else if (inventory->gpus.empty()) {
    ptxbench::LogInfo("no GPU: offering compile-only evaluation", {{"why", inventory->why_none}});
  } else {
    ptxbench::LogWarning(
        "GPUs found, but GPU evaluation is not built yet: offering compile-only evaluation",
        {{"gpus", std::to_string(inventory->gpus.size())},
         {"first", inventory->gpus[0].name + " " + inventory->gpus[0].sm_arch}});
  }

  std::vector<std::string> roots = {ptxbench::workloads::DefinitionRegistry::BundledRoot()};
  for (const std::string& d : absl::GetFlag(FLAGS_dataset)) roots.push_back(d);
  auto definitions = ptxbench::workloads::DefinitionRegistry::Load(roots);
  if (!definitions.ok()) return UsageError(std::string(definitions.status().message()));

  ptxbench::worker::CompilerOptions compiler_options;
  compiler_options.abi_include_dir = ptxbench::DataDir() + "/worker/kernel_abi";
  compiler_options.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  if (compiler_options.cache_dir.empty()) compiler_options.cache_dir = DefaultCacheDir();
  absl::StatusOr<std::string> version =
      ptxbench::worker::Compiler::ToolkitVersion(compiler_options.nvcc);
  if (!version.ok()) {
    std::fprintf(stderr, "ptxbench-worker: %s\n", std::string(version.status().message()).c_str());
    return 1;
  }
  ptxbench::worker::Compiler compiler(compiler_options);
  ptxbench::worker::CompileOnlyHandler handler(&compiler, definitions->get(), name, *version);

  ptxbench::executor::ExecutorRunner::Options runner_options;
  runner_options.scheduler_address = scheduler;
  runner_options.kind = ptxbench::v1::WORKER;
  runner_options.name = name;
  runner_options.capabilities.set_slots(slots);  // no GPUs: compile-only
  runner_options.slots = slots;
  ptxbench::executor::ExecutorRunner runner(std::move(runner_options), &handler);
  ptxbench::LogInfo("starting", {{"scheduler", scheduler},
                                 {"name", name},
                                 {"slots", std::to_string(slots)},
                                 {"mode", "compile-only"},
                                 {"cache", compiler_options.cache_dir},
                                 {"toolkit", *version}});
  return ptxbench::executor::RunUntilStopped(runner, "worker");
}

}  // namespace

int main(int argc, char** argv) {
  ptxbench::executor::BlockStopSignals();
  ptxbench::executor::ParseCommandLineOrExit(argc, argv);
  ptxbench::InitLogging("worker");

  if (!absl::GetFlag(FLAGS_simulate)) return RunCompileOnlyWorker();
  const int slots = absl::GetFlag(FLAGS_slots);
  const int gpus = absl::GetFlag(FLAGS_gpus);
  const int latency_ms = absl::GetFlag(FLAGS_latency_ms);
  const double failure_rate = absl::GetFlag(FLAGS_failure_rate);
  const double crash_rate = absl::GetFlag(FLAGS_crash_rate);
  if (slots < 1) return UsageError("--slots must be at least 1");
  if (gpus < 0) return UsageError("--gpus must not be negative");
  if (latency_ms < 0) return UsageError("--latency-ms must not be negative");
  if (!(failure_rate >= 0 && failure_rate <= 1))
    return UsageError("--failure-rate must be in [0, 1]");
  if (!(crash_rate >= 0 && crash_rate <= 1)) return UsageError("--crash-rate must be in [0, 1]");

  std::string scheduler = absl::GetFlag(FLAGS_scheduler);
  if (scheduler.empty()) scheduler = ptxbench::executor::DefaultSchedulerAddress();
  std::string name = absl::GetFlag(FLAGS_name);
  if (name.empty()) name = HostName();

  ptxbench::worker::SimulatedWorkerHandler::Options handler_options;
  handler_options.seed = absl::GetFlag(FLAGS_seed);
  handler_options.worker_id = name;
  handler_options.latency = absl::Milliseconds(latency_ms);
  handler_options.failure_rate = failure_rate;
  handler_options.crash_rate = crash_rate;
  ptxbench::worker::SimulatedWorkerHandler handler(std::move(handler_options));

  ptxbench::executor::ExecutorRunner::Options runner_options;
  runner_options.scheduler_address = scheduler;
  runner_options.kind = ptxbench::v1::WORKER;
  runner_options.name = name;
  runner_options.capabilities = ptxbench::worker::SimulatedWorkerCapabilities(gpus, slots);
  runner_options.slots = slots;
  ptxbench::executor::ExecutorRunner runner(std::move(runner_options), &handler);
  ptxbench::LogInfo("starting", {{"scheduler", scheduler},
                                 {"name", name},
                                 {"slots", std::to_string(slots)},
                                 {"gpus", std::to_string(gpus)},
                                 {"simulated", "true"}});
  return ptxbench::executor::RunUntilStopped(runner, "worker");
}
