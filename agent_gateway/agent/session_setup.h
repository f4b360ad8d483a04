#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_SETUP_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_SETUP_H_

// Internal to session.cc: the session's directory, files and sandbox view,
// and what the proxy needs of the model (session.h has the layout).

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent_gateway/agent/model_proxy.h"
#include "agent_gateway/agent/session.h"
#include "agents/clis.h"
#include "agents/launch.h"
#include "sandbox/policy.h"

namespace ptxbench::agent_gateway::session_internal {

// The relay's port on the session's own loopback.
inline constexpr int kRelayPort = 43123;

struct SessionFiles {
  std::string dir;
  std::string workspace, home, opt;
  std::string kernel;         // the kernel file the evaluate tool sends
  std::string error_log;      // starter fixit: the kernel's evaluation feedback
  std::string workload;       // opt/workload.json: the binding
  std::string workload_sha256;
  std::string tool_config;    // opt/tool.json
  std::string eval_socket, model_socket;
  std::string etc;            // the minimal /etc
  uid_t uid = 0;              // the session's uid (leased), its gid too
};

// The name of the session's kernel file in its workspace, by the
// experiment's language: kernel.ptx (ptx), kernel.py (triton: PTXBench's
// kernel.py::run), else kernel.cu. The evaluate tool sends its content; the
// scheduler evaluates it in the experiment's language.
std::string KernelFileName(absl::string_view language);

// Where the session of `task` lives: its own directory under sessions_dir.
std::string SessionDirectory(const SessionOptions& options, const ptxbench::v1::Task& task);

// Makes the directory of `task`'s session, which runs as `uid`, and writes
// its files. INTERNAL when the machine refuses (disk, permissions).
absl::StatusOr<SessionFiles> MakeSessionFiles(const SessionOptions& options,
                                              const ptxbench::v1::Task& task, uid_t uid);

// Unmounts and removes a session's directory.
void RemoveSessionDirectory(const std::string& dir);

// Hands the session's own parts (workspace, home, the sockets) to its uid.
absl::Status HandOver(const SessionFiles& files);

// The proxy's upstream for the session's model: TERMINAL-worthy errors
// (INVALID_ARGUMENT: not in the registry, spoken by another API; NOT_FOUND:
// its key's variable is unset) name the model and what to do.
absl::StatusOr<ModelProxy::Upstream> UpstreamFor(const ModelRegistry& registry,
                                                 const agents::AgentCli& cli,
                                                 const std::string& model);

// How the CLI is started in the session (agents/launch.h).
absl::StatusOr<agents::Launch> LaunchFor(const SessionOptions& options,
                                         const agents::AgentCli& cli,
                                         const ptxbench::v1::AgentSession& session,
                                         const SessionFiles& files);

// The sandbox policy of the session: its view (vendor libraries masked as
// in the kernels' views), uid, loopback, limits.
sandbox::Policy SessionPolicy(const SessionOptions& options, const agents::AgentCli& cli,
                              const SessionFiles& files, const agents::Launch& launch);

}  // namespace ptxbench::agent_gateway::session_internal

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_SETUP_H_
