#include "agent_gateway/providers/anthropic_provider.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway::anthropic {
namespace {

namespace v1 = ::ptxbench::v1;
using nlohmann::json;

// Anthropic requires max_tokens; this is its value when the registry has none.
constexpr int kDefaultMaxTokens = 8192;

int64_t Count(const json& usage, const char* key) {
  auto it = usage.find(key);
  return it != usage.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

static std::string Url(const ModelConfig& config) {
  return absl::StrCat(absl::StripSuffix(config.base_url, "/"), "/v1/messages");
}

static std::vector<std::string> Headers(const std::string& key) {
  return {"x-api-key: " + key, "anthropic-version: 2023-06-01"};
}

std::string RequestBody(const ModelConfig& config,
                                           const v1::LlmRequest& request) {
  const v1::ModelParameters p = EffectiveParams(config, request);
  std::string system;
  json messages = json::array();
  for (const v1::ChatMessage& m : request.messages()) {
    if (m.role() == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content();
    } else {
      messages.push_back({{"role", m.role()}, {"content", m.content()}});
    }
  }
  json body = {{"model", config.model_id},
               {"max_tokens", p.max_tokens() > 0 ? p.max_tokens() : kDefaultMaxTokens},
               {"messages", messages}};
  if (!system.empty()) body["system"] = system;
  if (p.thinking_budget_tokens() > 0) {
    // With thinking on, Anthropic takes no temperature or top_p of its own.
    body["thinking"] = {{"type", "enabled"}, {"budget_tokens", p.thinking_budget_tokens()}};
  } else {
    if (p.temperature() > 0) body["temperature"] = p.temperature();
    if (p.top_p() > 0) body["top_p"] = p.top_p();
  }
  return body.dump();
}

absl::StatusOr<v1::LlmResponse> ParseResponse(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("content") || !j["content"].is_array()) {
    return absl::InvalidArgumentError("the response has no content");
  }
  v1::LlmResponse r;
  std::string answer, thinking;
  for (const json& block : j["content"]) {
    if (!block.is_object()) continue;
    const std::string type = block.value("type", "");
    if (type == "text") answer += block.value("text", "");
    if (type == "thinking") thinking += block.value("thinking", "");
  }
  r.set_text(answer);
  r.set_reasoning(thinking);
  const std::string stop = j.value("stop_reason", "");
  r.set_finish_reason(stop == "end_turn" || stop == "stop_sequence" ? "stop"
                      : stop == "max_tokens"                        ? "length"
                                                                    : stop);
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    // Anthropic counts cache reads and writes apart from input_tokens.
    const int64_t cached = Count(*u, "cache_read_input_tokens");
    r.mutable_usage()->set_input_tokens(Count(*u, "input_tokens") + cached +
                                        Count(*u, "cache_creation_input_tokens"));
    r.mutable_usage()->set_cached_tokens(cached);
    r.mutable_usage()->set_output_tokens(Count(*u, "output_tokens"));
  }
  return r;
}

const ProviderShape kShape = {Url, Headers, RequestBody, ParseResponse};

}  // namespace ptxbench::agent_gateway::anthropic
