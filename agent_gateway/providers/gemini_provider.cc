#include "agent_gateway/providers/gemini_provider.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway::gemini {
namespace {

namespace v1 = ::ptxbench::v1;
using nlohmann::json;

int64_t Count(const json& usage, const char* key) {
  auto it = usage.find(key);
  return it != usage.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

json Text(const std::string& text) { return json::array({{{"text", text}}}); }

}  // namespace

static std::string Url(const ModelConfig& config) {
  return absl::StrCat(absl::StripSuffix(config.base_url, "/"), "/models/", config.model_id,
                      ":generateContent");
}

static std::vector<std::string> Headers(const std::string& key) { return {"x-goog-api-key: " + key}; }

std::string RequestBody(const ModelConfig& config, const v1::LlmRequest& request) {
  const v1::ModelParameters p = EffectiveParams(config, request);
  std::string system;
  json contents = json::array();
  for (const v1::ChatMessage& m : request.messages()) {
    if (m.role() == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content();
    } else {
      contents.push_back({{"role", m.role() == "assistant" ? "model" : "user"},
                          {"parts", Text(m.content())}});
    }
  }
  json generation = json::object();
  if (p.temperature() > 0) generation["temperature"] = p.temperature();
  if (p.top_p() > 0) generation["topP"] = p.top_p();
  if (p.max_tokens() > 0) generation["maxOutputTokens"] = p.max_tokens();
  if (p.thinking_budget_tokens() > 0) {
    generation["thinkingConfig"] = {{"thinkingBudget", p.thinking_budget_tokens()},
                                    {"includeThoughts", true}};
  }
  json body = {{"contents", contents}};
  if (!system.empty()) body["systemInstruction"] = {{"parts", Text(system)}};
  if (!generation.empty()) body["generationConfig"] = generation;
  return body.dump();
}

absl::StatusOr<v1::LlmResponse> ParseResponse(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("not a JSON object");
  v1::LlmResponse r;
  auto candidates = j.find("candidates");
  if (candidates == j.end() || !candidates->is_array() || candidates->empty()) {
    // A prompt blocked before any candidate: an answer with no text.
    const std::string reason =
        j.contains("promptFeedback") ? j["promptFeedback"].value("blockReason", "") : "";
    if (reason.empty()) return absl::InvalidArgumentError("the response has no candidates");
    r.set_finish_reason("content_filter: " + reason);
  } else {
    const json& c = (*candidates)[0];
    std::string answer, thoughts;
    if (c.contains("content") && c["content"].contains("parts")) {
      for (const json& part : c["content"]["parts"]) {
        if (!part.is_object()) continue;
        (part.value("thought", false) ? thoughts : answer) += part.value("text", "");
      }
    }
    r.set_text(answer);
    r.set_reasoning(thoughts);
    const std::string finish = c.value("finishReason", "");
    r.set_finish_reason(finish == "STOP"         ? "stop"
                        : finish == "MAX_TOKENS" ? "length"
                        : finish == "SAFETY"     ? "content_filter"
                                                 : absl::AsciiStrToLower(finish));
  }
  if (auto u = j.find("usageMetadata"); u != j.end() && u->is_object()) {
    const int64_t thoughts = Count(*u, "thoughtsTokenCount");
    r.mutable_usage()->set_input_tokens(Count(*u, "promptTokenCount"));
    r.mutable_usage()->set_cached_tokens(Count(*u, "cachedContentTokenCount"));
    r.mutable_usage()->set_output_tokens(Count(*u, "candidatesTokenCount") + thoughts);
    r.mutable_usage()->set_reasoning_tokens(thoughts);
  }
  return r;
}

const ProviderShape kShape = {Url, Headers, RequestBody, ParseResponse};

}  // namespace ptxbench::agent_gateway::gemini
