#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_AGENT_MODE_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_AGENT_MODE_H_

// ptxbench-gateway --agent-slots N: a gateway that runs coding-agent
// sessions (docs/AGENTS.md) instead of model calls. It registers its agent
// slots and the pinned CLIs installed under --agent-clis, leases only AGENT
// tasks, and runs each session (agent_gateway/agent/session.h) on a thread
// of its own. A machine that runs both runs two gateways: one for model
// calls, one for sessions.

#include <cstdint>
#include <string>
#include <vector>

#include "auth/channel.h"

namespace ptxbench::agent_gateway {

struct AgentGatewayConfig {
  std::string scheduler;
  auth::ChannelSecurity security;
  std::string name;
  int slots = 0;
  std::string clis_dir;      // "" = the source tree's third_party/agent-clis/node_modules
  std::string tool_binary;   // "" = ptxbench-agent-tool beside this binary or in the build tree
  std::string sessions_dir;  // "" = /tmp/ptxbench-sessions
  std::vector<std::string> model_files;  // besides the bundled registry
  std::string status_listen;
  std::string cgroup_parent;
  // The first of the sessions' uids (one per slot, as root); 0: the first
  // free block from 65100 (agent_host.h).
  uint32_t uid_base = 0;
};

// Runs until drained or stopped by signals; the process exit code. Usage
// errors (no CLI installed, no tool binary, a bad registry) are printed and
// return 2 before anything registers.
int RunAgentGateway(const AgentGatewayConfig& config);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_AGENT_MODE_H_
