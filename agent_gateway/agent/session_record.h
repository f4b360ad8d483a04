#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_RECORD_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_RECORD_H_

// What a session leaves for the record (docs/AGENTS.md, "Records"), each
// file capped so that one session's record stays within 16 MiB:
//   events.jsonl        the CLI's event stream (its stdout), 8 MiB
//   stderr.txt          the last 1 MiB of its stderr
//   model_calls.jsonl   one line per model call the proxy saw: target,
//                       status, refusal, the policy's edits, usage, cost,
//                       latency, and request and answer bodies (256 KiB
//                       each; none once the file passes 4 MiB)
//   home/...            the CLI's own session files under its HOME
//                       (*.json, *.jsonl; 2 MiB in all)
//   workspace/...       its final workspace (files up to 256 KiB, 1 MiB in all)

#include <string>
#include <vector>

#include "agent_gateway/agent/model_proxy.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::agent_gateway {

struct SessionOutput {
  std::string events;
  int64_t events_dropped = 0;
  std::string stderr_text;
  int64_t stderr_dropped = 0;
};

std::vector<ptxbench::v1::AgentRecord> SessionRecords(const SessionOutput& output,
                                                      const std::vector<ModelProxy::Call>& calls,
                                                      const std::string& home,
                                                      const std::string& workspace);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_RECORD_H_
