#ifndef PTXBENCH_AGENTS_LAUNCH_H_
#define PTXBENCH_AGENTS_LAUNCH_H_

// How each pinned CLI is started for one session (docs/AGENTS.md, "Facts of
// the pinned CLIs"): the configuration files it reads, its environment and
// its command. Shared by the gateway's session runner and the offline CLI
// tests, so that what the tests prove is what sessions run.
//
// Every CLI is pointed at http://127.0.0.1:PORT, where the session's relay
// listens inside the sandbox, with a placeholder key: the real key stays in
// the gateway's model proxy. Its only MCP server is ptxbench's evaluate tool.
// Provider-side web tools are switched off here and stripped again by the
// proxy (request_policy.h), which does not trust the CLI's settings.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agents/clis.h"

namespace ptxbench::agents {

struct LaunchOptions {
  const AgentCli* cli = nullptr;
  // Absolute paths as the CLI sees them (the session's sandbox binds them at
  // the same place).
  std::string program;      // the CLI's executable (AgentCli::executable under its install)
  std::string tool_binary;  // ptxbench-agent-tool
  std::string workspace;    // its working directory
  std::string home;         // its HOME: configuration and session files go here
  std::string tool_config;  // the evaluate tool's configuration (agent_tool/main.cc)
  int model_port = 0;       // the relay's port on the sandbox's loopback
  std::string model;        // the model name it sends (the proxy pins it anyway)
  std::string effort;       // "" = the CLI's default
  bool shell = true;        // false: file tools only (CLIs with can_drop_shell)
  std::string prompt;       // its first user message
  // How long one evaluate call may take before the CLI gives up on it.
  absl::Duration tool_timeout = absl::Minutes(16);
  // PATH inside the session.
  std::string path = "/usr/local/bin:/usr/bin:/bin";
};

struct Launch {
  std::vector<std::string> env;   // the whole environment, "K=V"
  std::vector<std::string> argv;  // run in the workspace
  // Seen in its event stream (stdout, JSON lines) once the session ended.
  std::string end_event;
};

// The placeholder key every CLI is given: the proxy ignores it.
inline constexpr char kSessionKey[] = "ptxbench-session";

// Writes the CLI's configuration under `home` and says how to start it.
// INVALID_ARGUMENT for missing options; INTERNAL when a file cannot be
// written.
absl::StatusOr<Launch> PrepareLaunch(const LaunchOptions& options);

}  // namespace ptxbench::agents

#endif  // PTXBENCH_AGENTS_LAUNCH_H_
