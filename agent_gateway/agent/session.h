#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_H_

// One agent session, as the gateway runs an AGENT task (docs/AGENTS.md,
// "Sessions"): a directory of its own, the evaluate socket bound to the
// scheduler (AgentEval), the model proxy holding the real key, and the
// pinned CLI in ptxbench's sandbox (its own uid; PID, mount and network
// namespaces with only `lo`; a view of the workspace, a minimal /etc, the
// system's programs, the CLI and the tool binary; no GPU, no credentials).
// The session ends when the CLI exits, a budget is spent (tokens, cost and
// model calls at the proxy, evaluations at the endpoint, wall time not
// counting time blocked in evaluations), it stalls (no output, model call
// or evaluation for stall_timeout), the target is met with stop_at_target,
// or its lease is revoked (cancel); the sandbox is killed with everything
// in it either way.
//
// Layout of a session's directory (root-owned 0755 but for what the
// session's uid owns):
//   workspace/   the CLI's working directory (session uid): its instruction
//                file, TASK.md, the kernel file
//   home/        its HOME (session uid): configuration, native session files
//   opt/         read-only to it: workload.json (the binding), tool.json
//   eval.sock, model.sock   the session's two ways out (session uid, 0600)

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent_gateway/models/call_permits.h"
#include "agent_gateway/models/model_registry.h"
#include "ptxbench/v1/executor.pb.h"
#include "sandbox/policy.h"
#include "sandbox/uid_range.h"

namespace ptxbench::agent_gateway {

struct SessionOptions {
  std::string clis_dir;      // the node_modules folder of the pinned CLIs
  std::string tool_binary;   // ptxbench-agent-tool
  std::string sessions_dir;  // each session's directory is made here (short: socket paths)
  const ModelRegistry* registry = nullptr;
  // ExecutorService.AgentEval with this gateway's executor id filled in.
  std::function<absl::StatusOr<ptxbench::v1::AgentEvalResponse>(
      const ptxbench::v1::AgentEvalRequest&)>
      agent_eval;
  // The sessions' uids (when the gateway runs as root; not owned, required):
  // each session leases one for its lifetime and runs as it, gid = uid, so
  // no two sessions at once share a uid (nor the kernel's per-uid limits).
  sandbox::UidRange* uids = nullptr;
  // Grants each model call of every session (call_permits.h: the fleet's
  // limits, held by the scheduler). Not owned, required.
  CallPermits* permits = nullptr;
  // The sandbox's limits.
  uint64_t memory_bytes = sandbox::kDefaultMemoryBytes;
  // The session's directory is a tmpfs of this size when the gateway runs
  // as root, so a session that fills its disk fails only itself.
  uint64_t disk_bytes = uint64_t{1} << 30;
  int max_processes = 512;
  // RLIMIT_NOFILE of each of its processes (soft = hard: Node raises its soft
  // limit to the hard one). Without a cgroup nothing else bounds the kernel
  // memory of its sockets and pipes (docs/AGENTS.md).
  uint64_t open_files = 4096;
  std::string cgroup_parent;  // "" = the watchdog
  // Stored event stream and stderr, each; the rest is counted, not kept.
  size_t max_output_bytes = 8 << 20;
  // Keep the session's directory after it ended (tests, debugging).
  bool keep_directory = false;
  absl::Duration poll = absl::Milliseconds(50);
};

// What a session left, for the record (stored with the trajectory next).
struct SessionRecord {
  std::string directory;
  std::string events;  // the CLI's stdout (its event stream), capped
  std::string stderr_text;
  int64_t events_dropped = 0;
};

// Runs the session of `task` (an AGENT task) to its end. Returns the
// completion to report: an AgentOutcome when it ran its course, a
// TaskFailure otherwise (INFRA: the gateway could not run it; TERMINAL: the
// CLI crashed, stalled or broke the sandbox's limits; the model or key is
// wrong). `record`, when given, gets what the session left.
ptxbench::v1::CompleteRequest RunAgentSession(const SessionOptions& options,
                                              const ptxbench::v1::Task& task,
                                              const std::atomic<bool>& cancelled,
                                              SessionRecord* record = nullptr);

// The pinned CLIs installed under `clis_dir` (with the sha256 of each
// executable): what a gateway with agent slots registers.
std::vector<ptxbench::v1::AgentCliInstall> InstalledAgentClis(const std::string& clis_dir);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_H_
