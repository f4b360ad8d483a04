#ifndef PTXBENCH_AGENT_TOOL_MCP_SERVER_H_
#define PTXBENCH_AGENT_TOOL_MCP_SERVER_H_

// The evaluate tool as an MCP server on stdio (newline-delimited JSON-RPC
// 2.0), as the agent CLIs start it. Tools without arguments:
//  - evaluate_kernel: evaluates the session's kernel file (its path by the
//    experiment's language) against the session's workload, and answers
//    with the feedback text a multiturn model gets;
//  - profile_kernel, when the experiment asks for profiles: the same, with
//    a profile of the kernel in the feedback (docs/MEASUREMENT.md,
//    "Profiles");
//  - budget_status: what is left of the session's budgets.
// A kernel that fails is normal feedback (isError false); isError is for
// what keeps ptxbench from evaluating it (no kernel file, an unreachable
// gateway, an infrastructure failure, a kernel file that is not UTF-8
// text), so the agent can tell the two apart.

#include <functional>
#include <istream>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent_tool/eval_wire.h"

namespace ptxbench::agent_tool {

// Where a session's files are, as the sandbox shows them.
struct ToolConfig {
  std::string kernel_path = "/workspace/kernel.cu";
  std::string workload_path = "/opt/ptxbench/workload.json";
  bool profile = false;  // profile_kernel is offered
};

// Sends one request to the gateway and returns its reply.
using Exchange = std::function<absl::StatusOr<EvalReply>(const EvalRequest&)>;

class McpServer {
 public:
  // The MCP versions it speaks, oldest first: it answers a client's own
  // version when it is one of these, else the newest.
  static const std::vector<std::string>& ProtocolVersions();

  McpServer(ToolConfig config, Exchange exchange, std::function<std::string()> new_action_id)
      : config_(std::move(config)),
        exchange_(std::move(exchange)),
        new_action_id_(std::move(new_action_id)) {}

  // One message in; the line that answers it, or "" for a notification.
  std::string Handle(absl::string_view line);
  // Handles every line of `in` until it ends, answering on `out`.
  void Serve(std::istream& in, std::ostream& out);

 private:
  // A tools/call result: the text, and whether the call failed.
  struct ToolResult {
    std::string text;
    bool is_error = false;
  };
  ToolResult EvaluateKernel(bool profile);
  ToolResult BudgetStatus();
  ToolResult FromReply(const absl::StatusOr<EvalReply>& reply) const;

  const ToolConfig config_;
  const Exchange exchange_;
  const std::function<std::string()> new_action_id_;
};

// Reads a file the agent wrote, at most `max` bytes: NOT_FOUND when absent,
// OUT_OF_RANGE when larger.
absl::StatusOr<std::string> ReadAgentFile(const std::string& path, size_t max);

// Reads the kernel file the agent wrote, as both ways to evaluate send it:
// at most kMaxSource bytes of UTF-8 text. NOT_FOUND when absent,
// OUT_OF_RANGE when larger, INVALID_ARGUMENT naming the first byte that is
// not UTF-8 (the kernel travels in a proto `string`; a byte replaced on the
// way would evaluate another kernel than the one the agent wrote).
absl::StatusOr<std::string> ReadKernelFile(const std::string& path);

}  // namespace ptxbench::agent_tool

#endif  // PTXBENCH_AGENT_TOOL_MCP_SERVER_H_
