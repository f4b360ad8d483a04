// ptxbench-gateway: leases LLM tasks from the scheduler and reports model
// answers. Real mode serves the models of the registry (bundled, plus
// --models FILE) whose API key is set (OpenAI-compatible, Anthropic, Gemini)
// or that need none (self-hosted, scripted), with up to --slots calls in
// flight on one HTTP event loop; health and metrics on --status-listen and
// in a stats log line. --simulate answers with generated kernels (or
// --answers-dir files) for tests and benchmarks. --agent-slots N runs
// coding-agent sessions instead (agent_mode.h).

#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "agent_gateway/agent/agent_mode.h"
#include "agent_gateway/models/model_registry.h"
#include "agent_gateway/providers/provider_gateway.h"
#include "agent_gateway/simulated/gateway.h"
#include "common/clock.h"
#include "common/log.h"
#include "daemon/start.h"
#include "daemon/status_server.h"
#include "executor/command_line.h"
#include "executor/connection_flags.h"
#include "executor/daemon_flags.h"
#include "executor/executor_runner.h"
#include "executor/health.h"
#include "executor/run_until_stopped.h"

ABSL_FLAG(std::vector<std::string>, models, {},
          "Model registry files that extend the bundled one (comma-separated)");
ABSL_FLAG(std::vector<std::string>, serve, {},
          "Comma-separated model names to serve (default: every registry model whose key is "
          "set; simulated: any model)");
ABSL_FLAG(int, call_timeout_s, 600, "Timeout of one model call, seconds (--call-timeout-s)");
ABSL_FLAG(std::string, answers_dir, "",
          "Answer from this folder of files (<definition>/turn<N>.cu|.ptx|.md or answer.*) "
          "instead of generated kernels (--answers-dir)");
ABSL_FLAG(int, agent_slots, 0,
          "Run coding-agent sessions instead of model calls: this many at once "
          "(--agent-slots; docs/AGENTS.md)");
ABSL_FLAG(std::string, agent_clis, "",
          "Where the pinned agent CLIs are installed (npm's node_modules; default: the source "
          "tree's third_party/agent-clis/node_modules) (--agent-clis)");
ABSL_FLAG(std::string, agent_tool, "",
          "The ptxbench-agent-tool binary sessions run (default: beside this binary, or in the "
          "build tree) (--agent-tool)");
ABSL_FLAG(std::string, agent_dir, "",
          "Where each session's directory is made (default /tmp/ptxbench-sessions) (--agent-dir)");
ABSL_FLAG(std::string, agent_cgroup, "",
          "A cgroup v2 directory for the sessions' memory, process and kernel-memory limits "
          "(--agent-cgroup; the memory and pids controllers must be available to it, e.g. a "
          "systemd unit with Delegate=yes: docs/AGENTS.md); without it a watchdog limits memory "
          "and processes, and nothing bounds a session's kernel memory");
ABSL_FLAG(uint32_t, agent_uid_base, 0,
          "As root, the sessions run as the uids --agent-uid-base .. + --agent-slots - 1, one "
          "per session, claimed on the machine for as long as the gateway runs "
          "(--agent-uid-base; default: the first free block from 65100)");
ABSL_FLAG(std::string, request_log, "",
          "Append '<trajectory_id> <turn>' to this file before every simulated model call "
          "(--request-log)");

namespace {

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptxbench-gateway: %s\n", message.c_str());
  return ptxbench::executor::kUsageExitCode;
}

std::vector<std::string> NonEmpty(const std::vector<std::string>& list) {
  std::vector<std::string> out;
  for (const std::string& s : list) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

// Hundreds of calls in flight need as many sockets: take the hard limit.
void RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// Real providers. A model named in --serve that cannot be served is an
// error; unnamed ones are skipped with the reason logged.
int RunRealGateway(const ptxbench::executor::DaemonFlags& flags) {
  namespace ag = ptxbench::agent_gateway;
  const int slots = flags.slots != 0 ? flags.slots : 256;
  if (slots < 1) return UsageError("--slots must be at least 1");
  RaiseOpenFileLimit();
  std::vector<std::string> files = {ag::ModelRegistry::BundledFile()};
  for (const std::string& f : NonEmpty(absl::GetFlag(FLAGS_models))) files.push_back(f);
  auto registry = ag::ModelRegistry::Load(files);
  if (!registry.ok()) return UsageError(std::string(registry.status().message()));
  const std::vector<std::string> named = NonEmpty(absl::GetFlag(FLAGS_serve));
  const std::vector<std::string> candidates = named.empty() ? (*registry)->Names() : named;
  // Declared before the handler: providers call through it until the
  // runner has seen every call end.
  ag::HttpClient http;
  std::map<std::string, ag::ProviderGatewayHandler::Served> served;
  for (const std::string& name : candidates) {
    absl::StatusOr<const ag::ModelConfig*> config = (*registry)->Find(name);
    absl::StatusOr<std::unique_ptr<ag::Provider>> provider =
        config.ok() ? ag::MakeProvider(**config, absl::Seconds(absl::GetFlag(FLAGS_call_timeout_s)),
                                       &http)
                    : absl::StatusOr<std::unique_ptr<ag::Provider>>(config.status());
    if (!provider.ok()) {
      if (!named.empty()) return UsageError(std::string(provider.status().message()));
      ptxbench::LogInfo("not serving a model", {{"model", name},
                                                {"why", std::string(provider.status().message())}});
      continue;
    }
    served[name] = {**config, *std::move(provider)};
  }
  if (served.empty()) {
    return UsageError(
        "no model to serve: set the API key of a registry model (e.g. OPENAI_API_KEY), or add "
        "a self-hosted or scripted model with --models FILE");
  }
  // Every call waits for the scheduler's permit: one rate limit per model
  // across the fleet (call_permits.h).
  std::atomic<ptxbench::executor::ExecutorRunner*> runner_ptr{nullptr};
  ag::SchedulerCallPermits::Options permit_options;
  permit_options.scheduler_address = flags.scheduler;
  permit_options.security = ptxbench::executor::ConnectionSecurityOrExit("ptxbench-gateway");
  permit_options.executor_id = [&runner_ptr] {
    ptxbench::executor::ExecutorRunner* runner = runner_ptr.load();
    return runner == nullptr ? std::string() : runner->executor_id();
  };
  for (const auto& [name, s] : served) permit_options.limits[name] = s.config.limits;
  ag::SchedulerCallPermits permits(std::move(permit_options));
  ag::ProviderGatewayHandler handler(std::move(served), &permits);
  ptxbench::executor::ExecutorRunner::Options runner_options;
  runner_options.scheduler_address = flags.scheduler;
  runner_options.security = ptxbench::executor::ConnectionSecurityOrExit("ptxbench-gateway");
  runner_options.kind = ptxbench::v1::GATEWAY;
  runner_options.name = flags.name;
  for (const std::string& m : handler.ModelNames()) runner_options.capabilities.add_models(m);
  runner_options.capabilities.set_slots(slots);
  runner_options.slots = slots;
  ptxbench::executor::ExecutorRunner runner(std::move(runner_options), &handler);
  runner_ptr.store(&runner);

  std::unique_ptr<ptxbench::daemon::StatusServer> status_server;
  if (!flags.status_listen.empty()) {
    auto started = ptxbench::daemon::StatusServer::Start(
        flags.status_listen, {[&runner] { return ptxbench::executor::ExecutorHealth(runner); },
                 [&handler] { return handler.metrics().Prometheus(); }});
    if (!started.ok()) return UsageError(std::string(started.status().message()));
    status_server = *std::move(started);
  }
  ptxbench::LogInfo("starting", {{"scheduler", flags.scheduler},
                                 {"name", flags.name},
                                 {"slots", std::to_string(slots)},
                                 {"models", absl::StrJoin(handler.ModelNames(), ",")},
                                 {"status", status_server ? status_server->address() : "off"},
                                 {"simulated", "false"}});
  // One "stats" line per model every --stats-interval-s.
  ptxbench::daemon::PeriodicLog stats(
      flags.stats_interval, [&handler] {
        for (const auto& [model, c] : handler.metrics().Snapshot()) {
          ptxbench::Log(ptxbench::LogLevel::kInfo, "stats",
                        ptxbench::agent_gateway::GatewayMetrics::LogFields(model, c));
        }
      });
  const int rc = ptxbench::executor::RunUntilStopped(runner, "gateway");
  permits.Stop();  // while the runner it asks for its id still exists
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  ptxbench::daemon::StartDaemonProcess();
  ptxbench::executor::ParseCommandLineOrExit(argc, argv);
  ptxbench::InitLogging("gateway");

  const ptxbench::executor::DaemonFlags flags =
      ptxbench::executor::ReadDaemonFlags({.name = "gateway", .latency = absl::Milliseconds(50)});
  if (absl::GetFlag(FLAGS_agent_slots) != 0) {
    ptxbench::agent_gateway::AgentGatewayConfig config;
    config.scheduler = flags.scheduler;
    config.security = ptxbench::executor::ConnectionSecurityOrExit("ptxbench-gateway");
    config.name = flags.name;
    config.slots = absl::GetFlag(FLAGS_agent_slots);
    config.clis_dir = absl::GetFlag(FLAGS_agent_clis);
    config.tool_binary = absl::GetFlag(FLAGS_agent_tool);
    config.sessions_dir = absl::GetFlag(FLAGS_agent_dir);
    config.model_files = NonEmpty(absl::GetFlag(FLAGS_models));
    config.status_listen = flags.status_listen;
    config.cgroup_parent = absl::GetFlag(FLAGS_agent_cgroup);
    config.uid_base = absl::GetFlag(FLAGS_agent_uid_base);
    return ptxbench::agent_gateway::RunAgentGateway(config);
  }
  if (!flags.simulate) return RunRealGateway(flags);
  // A simulated gateway holds a thread per slot: its default stays small.
  const int slots = flags.slots != 0 ? flags.slots : 16;
  if (slots < 1) return UsageError("--slots must be at least 1");
  if (absl::Status problem = ptxbench::executor::SimulationProblem(flags); !problem.ok()) {
    return UsageError(std::string(problem.message()));
  }
  const std::vector<std::string> models = NonEmpty(absl::GetFlag(FLAGS_serve));
  const std::string& scheduler = flags.scheduler;
  const std::string& name = flags.name;

  ptxbench::agent_gateway::SimulatedGatewayHandler::Options handler_options;
  handler_options.seed = flags.seed;
  handler_options.latency = flags.latency;
  handler_options.faults = flags.faults;
  handler_options.models = models;
  handler_options.request_log_path = absl::GetFlag(FLAGS_request_log);
  handler_options.answers_dir = absl::GetFlag(FLAGS_answers_dir);
  auto handler =
      ptxbench::agent_gateway::SimulatedGatewayHandler::Create(std::move(handler_options));
  if (!handler.ok()) return UsageError(std::string(handler.status().message()));

  ptxbench::executor::ExecutorRunner::Options runner_options;
  runner_options.scheduler_address = scheduler;
  runner_options.security = ptxbench::executor::ConnectionSecurityOrExit("ptxbench-gateway");
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
