#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_REQUEST_POLICY_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_REQUEST_POLICY_H_

// What the model proxy changes in every request an agent CLI sends, before
// it goes upstream (docs/AGENTS.md, "The model proxy"):
//  1. the model is pinned to the experiment's (a CLI's side requests for a
//     small model, or a second CLI the agent starts with another model, are
//     served by the experiment's model; the requested name is recorded);
//  2. the provider's server-side tools are removed: they run at the
//     provider, outside any sandbox, so they are the one way an agent could
//     browse or run code elsewhere despite having no network (OpenAI
//     Responses web_search*, file_search, code_interpreter,
//     image_generation, computer_use*, remote mcp; Anthropic web_search_*,
//     web_fetch_*, code_execution_*; Gemini googleSearch,
//     googleSearchRetrieval, urlContext, codeExecution);
//  3. the answer's length is capped to the tokens left in the budget, so one
//     answer cannot overshoot it.
// Each change is recorded, so a call's record says what the agent asked for.

#include <cstdint>
#include <string>
#include <vector>

#include "agents/clis.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway {

struct RequestLimits {
  std::string model;            // the experiment's model id upstream
  // The tokens left in the budget (> 0); 0 for a token-counting request,
  // which has no answer to cap.
  int64_t max_output_tokens;
};

// One change, in words: "model gpt-4o-mini -> gpt-5.6-sol", "removed tool
// web_search", "max_output_tokens 128000 -> 4000".
using PolicyEdits = std::vector<std::string>;

// Applies the policy to a request `body` of `wire`. `path` is the request's
// path: Gemini names the model there (models/M:streamGenerateContent), so
// it is rewritten in place too.
PolicyEdits ApplyRequestPolicy(agents::Wire wire, const RequestLimits& limits,
                               nlohmann::json& body, std::string& path);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_REQUEST_POLICY_H_
