#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDERS_GEMINI_PROVIDER_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDERS_GEMINI_PROVIDER_H_

// Gemini generateContent (POST {base_url}/models/{model_id}:generateContent,
// key in the x-goog-api-key header, never in the URL), with a thinking
// budget when thinking_budget_tokens is set. Thought parts come back as the
// reasoning text; thought tokens count as output (Gemini bills them so).

#include <string>

#include "absl/status/statusor.h"
#include "agent_gateway/providers/http_provider.h"

namespace ptxbench::agent_gateway::gemini {

extern const ProviderShape kShape;

std::string RequestBody(const ModelConfig& config, const ptxbench::v1::LlmRequest& request);
absl::StatusOr<ptxbench::v1::LlmResponse> ParseResponse(const std::string& body);

}  // namespace ptxbench::agent_gateway::gemini

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDERS_GEMINI_PROVIDER_H_
