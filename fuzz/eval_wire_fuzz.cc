// The gateway reads an agent's evaluate requests (hostile: the agent writes
// anything it likes to its session socket), and the tool reads replies.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent_tool/eval_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ptxbench::agent_tool::EvalRequest> r =
      ptxbench::agent_tool::ParseRequest(bytes);
  // What parses must survive its own encoding unchanged.
  if (r.ok()) {
    absl::StatusOr<ptxbench::agent_tool::EvalRequest> again =
        ptxbench::agent_tool::ParseRequest(ptxbench::agent_tool::EncodeRequest(*r));
    if (!again.ok() || again->source != r->source || again->action_id != r->action_id) {
      __builtin_trap();
    }
  }
  (void)ptxbench::agent_tool::ParseReply(bytes);
  return 0;
}
