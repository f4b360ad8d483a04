#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDERS_ANTHROPIC_PROVIDER_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDERS_ANTHROPIC_PROVIDER_H_

// The Anthropic Messages API (POST {base_url}/v1/messages), with extended
// thinking when the model's thinking_budget_tokens is set. The system prompt
// goes in the top-level "system" field; thinking blocks come back as the
// reasoning text and are never sent back (the conversation carries answers).

#include <string>

#include "absl/status/statusor.h"
#include "agent_gateway/providers/http_provider.h"

namespace ptxbench::agent_gateway::anthropic {

extern const ProviderShape kShape;

std::string RequestBody(const ModelConfig& config, const ptxbench::v1::LlmRequest& request);
absl::StatusOr<ptxbench::v1::LlmResponse> ParseResponse(const std::string& body);

}  // namespace ptxbench::agent_gateway::anthropic

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDERS_ANTHROPIC_PROVIDER_H_
