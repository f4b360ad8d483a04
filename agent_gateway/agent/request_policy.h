#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_REQUEST_POLICY_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_REQUEST_POLICY_H_

// What the model proxy changes in a request body that passed the
// allow-lists (request_allowlist.h) before it goes upstream (docs/AGENTS.md,
// "The model proxy"):
//  1. the model is pinned to the experiment's (a CLI's side requests for a
//     small model, or a second CLI the agent starts with another model, are
//     served by the experiment's model; the requested name is recorded).
//     Gemini names the model in the path, which the proxy builds itself
//     (routes.h); a countTokens body that names one gets the pinned one;
//  2. the answer's length is capped to the output the call's reservation
//     holds (model_proxy.h), thinking budgets with it, so one answer cannot
//     overshoot the budget.
// Each change is recorded in words, so a call's record says what the agent
// asked for. What the allow-lists refuse is never edited into shape here.

#include <cstdint>
#include <string>
#include <vector>

#include "agents/clis.h"
#include "common/json_reader.h"

namespace ptxbench::agent_gateway {

struct RequestLimits {
  std::string model;  // the experiment's model id upstream
  // The output the call may produce (> 0); 0 for a token-counting request,
  // which has no answer to cap.
  int64_t max_output_tokens = 0;
};

// One change, in words: "model gpt-4o-mini -> gpt-5.6-sol",
// "max_output_tokens 128000 -> 4000".
using PolicyEdits = std::vector<std::string>;

PolicyEdits ApplyRequestPolicy(agents::Wire wire, const RequestLimits& limits, StrictJson& body);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_REQUEST_POLICY_H_
