#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDERS_OPENAI_PROVIDER_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDERS_OPENAI_PROVIDER_H_

// OpenAI-compatible chat completions (POST {base_url}/chat/completions):
// OpenAI, OpenRouter, Together, and self-hosted vLLM / SGLang / llama.cpp /
// Ollama servers. Reasoning text comes from `reasoning_content` (vLLM,
// DeepSeek) or `reasoning` (OpenRouter); reasoning and cached token counts
// from the usage details.

#include <string>

#include "absl/status/statusor.h"
#include "agent_gateway/providers/http_provider.h"

namespace ptxbench::agent_gateway::openai {

extern const ProviderShape kShape;

std::string RequestBody(const ModelConfig& config, const ptxbench::v1::LlmRequest& request);
absl::StatusOr<ptxbench::v1::LlmResponse> ParseResponse(const std::string& body);

// GET {base_url}/models and check that the configured model id is served
// (self-hosted servers serve exactly what they loaded). kUnavailable when
// the endpoint does not answer, kNotFound naming the ids it serves.
absl::Status CheckServed(const ModelConfig& config, const std::string& key, HttpClient& http);

}  // namespace ptxbench::agent_gateway::openai

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDERS_OPENAI_PROVIDER_H_
