#ifndef PTXBENCH_AGENT_TOOL_EVAL_WIRE_H_
#define PTXBENCH_AGENT_TOOL_EVAL_WIRE_H_

// Folder agent_tool/: what runs inside an agent's sandbox to reach
// ptxbench (docs/AGENTS.md): the evaluate tool as an MCP stdio server
// (mcp_server.h) and as the `ptxbench-eval` command, and this wire between
// them and the gateway. May include: common/.
//
// The wire: one request and one reply per connection on the session's unix
// socket, each a frame of a 4-byte big-endian length and a strict JSON
// object (common/json_reader.h):
//   {"op": "evaluate", "action_id": ID, "source": TEXT, "workload_sha256": HEX,
//    ["profile": true]}
//   {"op": "budget"}
// and the reply {"exit_code": 0|1|2, "text": TEXT}: 0 the kernel passed, 1
// it did not (the text is its feedback), 2 ptxbench could not evaluate it.
// The tool reads the agent's files inside the sandbox and sends their
// contents, so nothing outside the sandbox ever opens a path the agent
// wrote. The gateway parses requests as hostile input (fuzz/eval_wire_fuzz.cc).

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxbench::agent_tool {

inline constexpr size_t kMaxSource = 1 << 20;  // a kernel's source, bytes
inline constexpr size_t kMaxText = 1 << 20;    // a reply's text, bytes
// A frame: the largest request is a source of kMaxSource bytes, each of which
// JSON may write as a 6-byte escape.
inline constexpr size_t kMaxFrame = 6 * kMaxSource + 4096;

struct EvalRequest {
  enum class Op { kEvaluate, kBudget };
  Op op = Op::kEvaluate;
  std::string action_id;  // [A-Za-z0-9_-]{1,64}: a retry sends the same one
  std::string source;
  std::string workload_sha256;  // 64 lowercase hex digits
  bool profile = false;  // profile_kernel: the evaluation is profiled too
};

struct EvalReply {
  int exit_code = 2;
  std::string text;
};

std::string EncodeRequest(const EvalRequest& request);
// INVALID_ARGUMENT naming the first problem (the strict reader's message).
absl::StatusOr<EvalRequest> ParseRequest(absl::string_view json);
std::string EncodeReply(const EvalReply& reply);
absl::StatusOr<EvalReply> ParseReply(absl::string_view json);

// One frame to / from `fd`. ReadFrame refuses a length over `max` (DATA_LOSS)
// and gives up after `timeout` (DEADLINE_EXCEEDED); UNAVAILABLE when the peer
// closed first.
absl::Status WriteFrame(int fd, absl::string_view payload);
absl::StatusOr<std::string> ReadFrame(int fd, size_t max, absl::Duration timeout);

}  // namespace ptxbench::agent_tool

#endif  // PTXBENCH_AGENT_TOOL_EVAL_WIRE_H_
