#ifndef PTXBENCH_AGENT_GATEWAY_OPENAI_PROVIDER_H_
#define PTXBENCH_AGENT_GATEWAY_OPENAI_PROVIDER_H_

// OpenAI-compatible chat completions (POST {base_url}/chat/completions):
// OpenAI, OpenRouter, Together, and self-hosted vLLM / SGLang / llama.cpp /
// Ollama servers. Reasoning text comes from `reasoning_content` (vLLM,
// DeepSeek) or `reasoning` (OpenRouter); reasoning and cached token counts
// from the usage details.

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent_gateway/model_registry.h"
#include "agent_gateway/provider.h"

namespace ptxbench::agent_gateway {

class OpenAiProvider final : public Provider {
 public:
  OpenAiProvider(ModelConfig config, std::string api_key, absl::Duration timeout)
      : config_(std::move(config)), key_(std::move(api_key)), timeout_(timeout) {}
  CallOutcome Call(const ptxbench::v1::LlmRequest& request) override;
  // GET {base_url}/models and check that the configured model id is served
  // (self-hosted servers serve exactly what they loaded). kUnavailable when
  // the endpoint does not answer, kNotFound naming the ids it serves.
  absl::Status CheckServed() const;

  // The JSON body for `request` (model id and sampling from the config).
  static std::string RequestBody(const ModelConfig& config, const ptxbench::v1::LlmRequest& request);
  // Text, reasoning, finish reason and usage of a 200 body (cost not set).
  // kInvalidArgument for a body without choices.
  static absl::StatusOr<ptxbench::v1::LlmResponse> ParseResponse(const std::string& body);

 private:
  const ModelConfig config_;
  const std::string key_;
  const absl::Duration timeout_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_OPENAI_PROVIDER_H_
