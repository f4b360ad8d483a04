// ptxbench-gateway: leases LLM tasks from the scheduler and reports model
// answers. Only the simulated model exists so far (--simulate).

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent_gateway/simulated_gateway.h"
#include "common/log.h"
#include "executor/command_line.h"
#include "executor/executor_runner.h"
#include "executor/signals.h"

ABSL_FLAG(std::string, scheduler, "",
          "Scheduler address HOST:PORT (default: $PTXBENCH_SCHEDULER, else 127.0.0.1:50051)");
ABSL_FLAG(bool, simulate, false,
          "Answer with a simulated model instead of calling providers (required for now)");
ABSL_FLAG(std::string, name, "gateway", "Gateway name shown by the scheduler");
ABSL_FLAG(std::vector<std::string>, models, {},
          "Comma-separated model names served (default: any model)");
ABSL_FLAG(int, slots, 16, "Model calls in flight at once");
ABSL_FLAG(uint64_t, seed, 0, "Seed of the simulated answers and injected faults");
ABSL_FLAG(int, latency_ms, 50, "Simulated model latency, milliseconds (--latency-ms)");
ABSL_FLAG(double, failure_rate, 0.0,
          "Probability of a simulated MODEL_API failure, retry after 100 ms (--failure-rate)");
ABSL_FLAG(double, crash_rate, 0.0,
          "Probability that the process exits abruptly (status 70) right after leasing a "
          "task (--crash-rate)");
ABSL_FLAG(std::string, answers_dir, "",
          "Answer from this folder of files (<definition>/turn<N>.cu|.ptx|.md or answer.*) "
          "instead of generated kernels (--answers-dir)");
ABSL_FLAG(std::string, request_log, "",
          "Append '<trajectory_id> <turn>' to this file before every simulated model call "
          "(--request-log)");

namespace {

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptxbench-gateway: %s\n", message.c_str());
  return ptxbench::executor::kUsageExitCode;
}

}  // namespace

int main(int argc, char** argv) {
  ptxbench::executor::BlockStopSignals();
  ptxbench::executor::ParseCommandLineOrExit(argc, argv);
  ptxbench::InitLogging("gateway");

  if (!absl::GetFlag(FLAGS_simulate)) {
    return UsageError(
        "real model providers are not built yet (a later issue); run with --simulate");
  }
  const int slots = absl::GetFlag(FLAGS_slots);
  const int latency_ms = absl::GetFlag(FLAGS_latency_ms);
  const double failure_rate = absl::GetFlag(FLAGS_failure_rate);
  const double crash_rate = absl::GetFlag(FLAGS_crash_rate);
  if (slots < 1) return UsageError("--slots must be at least 1");
  if (latency_ms < 0) return UsageError("--latency-ms must not be negative");
  if (!(failure_rate >= 0 && failure_rate <= 1))
    return UsageError("--failure-rate must be in [0, 1]");
  if (!(crash_rate >= 0 && crash_rate <= 1)) return UsageError("--crash-rate must be in [0, 1]");
  std::vector<std::string> models;
  for (const std::string& m : absl::GetFlag(FLAGS_models)) {
    if (!m.empty()) models.push_back(m);
  }

  std::string scheduler = absl::GetFlag(FLAGS_scheduler);
  if (scheduler.empty()) scheduler = ptxbench::executor::DefaultSchedulerAddress();
  const std::string name = absl::GetFlag(FLAGS_name);

  ptxbench::agent_gateway::SimulatedGatewayHandler::Options handler_options;
  handler_options.seed = absl::GetFlag(FLAGS_seed);
  handler_options.latency = absl::Milliseconds(latency_ms);
  handler_options.failure_rate = failure_rate;
  handler_options.crash_rate = crash_rate;
  handler_options.models = models;
  handler_options.request_log_path = absl::GetFlag(FLAGS_request_log);
  handler_options.answers_dir = absl::GetFlag(FLAGS_answers_dir);
  auto handler =
      ptxbench::agent_gateway::SimulatedGatewayHandler::Create(std::move(handler_options));
  if (!handler.ok()) return UsageError(std::string(handler.status().message()));

  ptxbench::executor::ExecutorRunner::Options runner_options;
  runner_options.scheduler_address = scheduler;
  runner_options.kind = ptxbench::v1::GATEWAY;
  runner_options.name = name;
  runner_options.capabilities =
      ptxbench::agent_gateway::SimulatedGatewayCapabilities(models, slots);
  runner_options.slots = slots;
  ptxbench::executor::ExecutorRunner runner(std::move(runner_options), handler->get());
  ptxbench::LogInfo("starting", {{"scheduler", scheduler},
                                 {"name", name},
                                 {"slots", std::to_string(slots)},
                                 {"models", models.empty() ? "*" : absl::StrJoin(models, ",")},
                                 {"simulated", "true"}});
  return ptxbench::executor::RunUntilStopped(runner, "gateway");
}
