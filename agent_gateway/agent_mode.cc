#include "agent_gateway/agent_mode.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent_gateway/agent/session.h"
#include "agent_gateway/model_registry.h"
#include "common/data_dir.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "daemon/status_server.h"
#include "executor/command_line.h"
#include "executor/executor_runner.h"
#include "executor/health.h"
#include "executor/run_until_stopped.h"
#include "ptxbench/v1/executor.grpc.pb.h"

namespace ptxbench::agent_gateway {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptxbench-gateway: %s\n", message.c_str());
  return executor::kUsageExitCode;
}

// ptxbench-agent-tool beside this binary, else in the build tree.
std::string DefaultToolBinary() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  for (const fs::path& candidate :
       {self.parent_path() / "ptxbench-agent-tool",
        (self.parent_path() / ".." / "agent_tool" / "ptxbench-agent-tool").lexically_normal()}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

class SessionHandler : public executor::TaskHandler {
 public:
  explicit SessionHandler(SessionOptions options) : options_(std::move(options)) {}
  v1::CompleteRequest Run(const v1::Task& task, const std::atomic<bool>& cancelled) override {
    return RunAgentSession(options_, task, cancelled);
  }

 private:
  const SessionOptions options_;
};

}  // namespace

int RunAgentGateway(const AgentGatewayConfig& c) {
  if (c.slots < 1) return UsageError("--agent-slots must be at least 1");
  const std::string clis_dir =
      c.clis_dir.empty() ? DataDir() + "/third_party/agent-clis/node_modules" : c.clis_dir;
  const std::vector<v1::AgentCliInstall> installed = InstalledAgentClis(clis_dir);
  if (installed.empty()) {
    return UsageError(absl::StrCat("no pinned agent CLI is installed under ", clis_dir,
                                   ": scripts/setup.sh installs them (or pass --agent-clis DIR)"));
  }
  const std::string tool = c.tool_binary.empty() ? DefaultToolBinary() : c.tool_binary;
  if (tool.empty() || access(tool.c_str(), X_OK) != 0) {
    return UsageError("cannot find ptxbench-agent-tool: build it, or pass --agent-tool PATH");
  }
  std::vector<std::string> files = {ModelRegistry::BundledFile()};
  files.insert(files.end(), c.model_files.begin(), c.model_files.end());
  absl::StatusOr<std::unique_ptr<ModelRegistry>> registry = ModelRegistry::Load(files);
  if (!registry.ok()) return UsageError(std::string(registry.status().message()));
  const std::string sessions = c.sessions_dir.empty() ? "/tmp/ptxbench-sessions" : c.sessions_dir;
  std::error_code ec;
  fs::create_directories(sessions, ec);
  // Sessions' uid passes through to its own directory; lists nothing.
  if (ec || chmod(sessions.c_str(), 0711) != 0) {
    return UsageError(absl::StrCat("cannot make the sessions directory ", sessions));
  }

  executor::ExecutorRunner::Options runner_options;
  runner_options.scheduler_address = c.scheduler;
  runner_options.security = c.security;
  runner_options.kind = v1::GATEWAY;
  runner_options.name = c.name;
  runner_options.slots = c.slots;
  runner_options.capabilities.set_agent_slots(c.slots);
  for (const v1::AgentCliInstall& cli : installed) *runner_options.capabilities.add_agent_clis() = cli;
  runner_options.lease_kinds = {v1::AGENT};

  // The sessions' evaluations go to the scheduler on a channel of their own.
  auto stub = v1::ExecutorService::NewStub(auth::NewChannel(c.scheduler, c.security));
  executor::ExecutorRunner* runner_ptr = nullptr;
  SessionOptions options;
  options.clis_dir = clis_dir;
  options.tool_binary = tool;
  options.sessions_dir = sessions;
  options.registry = registry->get();
  options.cgroup_parent = c.cgroup_parent;
  options.agent_eval = [&stub, &runner_ptr](const v1::AgentEvalRequest& r)
      -> absl::StatusOr<v1::AgentEvalResponse> {
    v1::AgentEvalRequest request = r;
    request.set_executor_id(runner_ptr->executor_id());
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(request.wait_ms() + 15'000));
    v1::AgentEvalResponse response;
    grpc::Status status = stub->AgentEval(&ctx, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  };
  SessionHandler handler(options);
  executor::ExecutorRunner runner(std::move(runner_options), &handler);
  runner_ptr = &runner;

  std::unique_ptr<daemon::StatusServer> status_server;
  if (!c.status_listen.empty()) {
    auto started = daemon::StatusServer::Start(
        c.status_listen, {[&runner] { return executor::ExecutorHealth(runner); },
                          [] { return std::string(); }});
    if (!started.ok()) return UsageError(std::string(started.status().message()));
    status_server = *std::move(started);
  }
  std::vector<std::string> clis;
  for (const v1::AgentCliInstall& cli : installed) {
    clis.push_back(absl::StrCat(cli.name(), "@", cli.version()));
  }
  LogInfo("starting", {{"scheduler", c.scheduler},
                       {"name", c.name},
                       {"agent_slots", std::to_string(c.slots)},
                       {"clis", absl::StrJoin(clis, ",")},
                       {"sessions", sessions},
                       {"status", status_server ? status_server->address() : "off"}});
  return executor::RunUntilStopped(runner, "gateway");
}

}  // namespace ptxbench::agent_gateway
