#include "agent_gateway/agent/agent_mode.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent_gateway/agent/agent_host.h"
#include "agent_gateway/agent/session.h"
#include "agent_gateway/models/model_registry.h"
#include "common/data_dir.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "daemon/status_server.h"
#include "executor/command_line.h"
#include "executor/executor_runner.h"
#include "executor/health.h"
#include "executor/report_repair.h"
#include "executor/run_until_stopped.h"
#include "ptxbench/v1/executor.grpc.pb.h"
#include "sandbox/protections.h"
#include "sandbox/uid_range.h"

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
  // What the gateway takes of its machine (agent_host.h), in this order:
  // the host's mounts are out of reach once it has its own, and no thread
  // may exist before that.
  const std::string sessions = c.sessions_dir.empty() ? "/tmp/ptxbench-sessions" : c.sessions_dir;
  absl::StatusOr<SessionsDirectory> sessions_dir = SessionsDirectory::Take(sessions);
  if (!sessions_dir.ok()) return UsageError(std::string(sessions_dir.status().message()));
  const bool root = geteuid() == 0;
  std::optional<sandbox::UidBlock> block;
  if (root) {
    absl::StatusOr<sandbox::UidBlock> claimed = ClaimSessionUids(c.uid_base, c.slots);
    if (!claimed.ok()) {
      return UsageError(absl::StrCat("no uids for the sessions: ", claimed.status().message(),
                                     " (--agent-uid-base)"));
    }
    block = *std::move(claimed);
  }
  if (const int removed = sessions_dir->RemoveLeftovers(); removed > 0) {
    LogWarning("removed what an earlier gateway's sessions left",
               {{"sessions", sessions}, {"directories", std::to_string(removed)}});
  }
  if (root) {
    if (absl::Status own = EnterOwnMountNamespace(); !own.ok()) {
      return UsageError(std::string(own.message()));
    }
  }
  // Without root the sandbox maps each session's uid to the gateway's own.
  sandbox::UidRange uids(block ? block->first() : kFirstSessionUid, c.slots);
  if (const std::string why = sandbox::ProbeSandbox(uids.first()); !why.empty()) {
    return UsageError(absl::StrCat("sessions cannot be sandboxed here: ", why));
  }
  if (!c.cgroup_parent.empty()) {
    if (absl::Status prepared = PrepareSessionsCgroup(c.cgroup_parent); !prepared.ok()) {
      return UsageError(absl::StrCat("--agent-cgroup: ", prepared.message(), " (docs/AGENTS.md)"));
    }
  }
  SessionOptions options;
  const sandbox::Protections protections = SessionProtections(
      {block ? &*block : nullptr, options.disk_bytes, options.open_files, c.cgroup_parent});
  for (const std::string& p : protections.active) LogInfo("protection", {{"active", p}});
  for (const std::string& w : protections.warnings) {
    LogWarning("protection missing", {{"warning", w}});
  }

  executor::ExecutorRunner::Options runner_options;
  runner_options.scheduler_address = c.scheduler;
  runner_options.security = c.security;
  runner_options.kind = v1::GATEWAY;
  runner_options.name = c.name;
  runner_options.slots = c.slots;
  runner_options.capabilities.set_agent_slots(c.slots);
  for (const v1::AgentCliInstall& cli : installed) *runner_options.capabilities.add_agent_clis() = cli;
  for (const std::string& p : protections.active) runner_options.capabilities.add_protections(p);
  for (const std::string& w : protections.warnings) {
    runner_options.capabilities.add_protection_warnings(w);
  }
  runner_options.lease_kinds = {v1::AGENT};

  // The sessions' evaluations go to the scheduler on a channel of their own.
  auto stub = v1::ExecutorService::NewStub(auth::NewChannel(c.scheduler, c.security));
  std::atomic<executor::ExecutorRunner*> runner_ptr{nullptr};
  options.clis_dir = clis_dir;
  options.tool_binary = tool;
  options.sessions_dir = sessions;
  options.registry = registry->get();
  options.uids = &uids;
  options.cgroup_parent = c.cgroup_parent;
  // Every session's model calls wait for the scheduler's permits: one rate
  // limit per model across the fleet (call_permits.h).
  SchedulerCallPermits::Options permit_options;
  permit_options.scheduler_address = c.scheduler;
  permit_options.security = c.security;
  permit_options.executor_id = [&runner_ptr] {
    executor::ExecutorRunner* runner = runner_ptr.load();
    return runner == nullptr ? std::string() : runner->executor_id();
  };
  for (const std::string& name : (*registry)->Names()) {
    permit_options.limits[name] = (*(*registry)->Find(name))->limits;
  }
  SchedulerCallPermits permits(std::move(permit_options));
  options.permits = &permits;
  options.agent_eval = [&stub, &runner_ptr](const v1::AgentEvalRequest& r)
      -> absl::StatusOr<v1::AgentEvalResponse> {
    v1::AgentEvalRequest request = r;
    request.set_executor_id(runner_ptr.load()->executor_id());
    // Every path already refuses a kernel that is not UTF-8; a request that
    // still carried one would fail to parse at the scheduler.
    if (const std::vector<std::string> repaired = executor::MakeStringsValidUtf8(&request);
        !repaired.empty()) {
      LogWarning("an evaluation request's text was not UTF-8; repaired",
                 {{"fields", absl::StrJoin(repaired, ",")}});
    }
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
  runner_ptr.store(&runner);

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
  LogInfo("starting",
          {{"scheduler", c.scheduler},
           {"name", c.name},
           {"agent_slots", std::to_string(c.slots)},
           {"clis", absl::StrJoin(clis, ",")},
           {"sessions", sessions},
           {"session_uids", absl::StrCat(uids.first(), "..", uids.first() + uids.count() - 1)},
           {"status", status_server ? status_server->address() : "off"}});
  const int rc = executor::RunUntilStopped(runner, "gateway");
  permits.Stop();  // while the runner it asks for its id still exists
  return rc;
}

}  // namespace ptxbench::agent_gateway
