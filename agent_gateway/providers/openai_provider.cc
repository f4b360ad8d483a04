#include "agent_gateway/providers/openai_provider.h"

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway::openai {
namespace {

namespace v1 = ::ptxbench::v1;
using nlohmann::json;

int64_t IntAt(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object() || !cur->contains(key)) return 0;
    cur = &(*cur)[key];
  }
  return cur->is_number_integer() ? cur->get<int64_t>() : 0;
}

std::string StringAt(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string RequestBody(const ModelConfig& config, const v1::LlmRequest& request) {
  json messages = json::array();
  for (const v1::ChatMessage& m : request.messages()) {
    messages.push_back({{"role", m.role()}, {"content", m.content()}});
  }
  json body = {{"model", config.model_id}, {"messages", messages}};
  // The experiment's parameters, where set, over the registry's.
  const v1::ModelParameters p = EffectiveParams(config, request);
  if (p.temperature() > 0) body["temperature"] = p.temperature();
  if (p.top_p() > 0) body["top_p"] = p.top_p();
  if (p.max_tokens() > 0) {
    // OpenAI's own API wants max_completion_tokens (reasoning models reject
    // max_tokens); compatible servers know max_tokens.
    body[absl::StrContains(config.base_url, "api.openai.com") ? "max_completion_tokens"
                                                              : "max_tokens"] = p.max_tokens();
  }
  if (!p.reasoning_effort().empty()) body["reasoning_effort"] = p.reasoning_effort();
  return body.dump();
}

absl::StatusOr<v1::LlmResponse> ParseResponse(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("choices") || !j["choices"].is_array() ||
      j["choices"].empty() || !j["choices"][0].is_object()) {
    return absl::InvalidArgumentError("the response has no choices");
  }
  const json& choice = j["choices"][0];
  v1::LlmResponse r;
  if (auto m = choice.find("message"); m != choice.end() && m->is_object()) {
    r.set_text(StringAt(*m, "content"));
    std::string reasoning = StringAt(*m, "reasoning_content");
    if (reasoning.empty()) reasoning = StringAt(*m, "reasoning");
    r.set_reasoning(reasoning);
  }
  r.set_finish_reason(StringAt(choice, "finish_reason"));
  v1::Usage* u = r.mutable_usage();
  u->set_input_tokens(IntAt(j, {"usage", "prompt_tokens"}));
  u->set_output_tokens(IntAt(j, {"usage", "completion_tokens"}));
  u->set_reasoning_tokens(IntAt(j, {"usage", "completion_tokens_details", "reasoning_tokens"}));
  u->set_cached_tokens(IntAt(j, {"usage", "prompt_tokens_details", "cached_tokens"}));
  return r;
}

absl::Status CheckServed(const ModelConfig& config, const std::string& key, HttpClient& client) {
  HttpRequest http;
  http.url = absl::StrCat(absl::StripSuffix(config.base_url, "/"), "/models");
  if (!key.empty()) http.headers.push_back("Authorization: Bearer " + key);
  http.post = false;
  http.timeout = absl::Seconds(10);
  HttpResult response = client.Fetch(http);
  if (!response.ok() || response->status != 200) {
    return absl::UnavailableError(absl::StrCat(
        "model ", config.name, ": ", http.url, " does not answer (",
        response.ok() ? absl::StrCat("HTTP ", response->status) : response.status().message(),
        ")"));
  }
  json j = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> ids;
  if (!j.is_discarded() && j.is_object() && j.contains("data") && j["data"].is_array()) {
    for (const json& m : j["data"]) {
      if (m.is_object()) ids.push_back(StringAt(m, "id"));
    }
  }
  if (std::find(ids.begin(), ids.end(), config.model_id) != ids.end()) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat("model ", config.name, ": ", config.base_url,
                                          " does not serve \"", config.model_id,
                                          "\" (it serves: ", absl::StrJoin(ids, ", "), ")"));
}

static std::string Url(const ModelConfig& config) {
  return absl::StrCat(absl::StripSuffix(config.base_url, "/"), "/chat/completions");
}

static std::vector<std::string> Headers(const std::string& key) {
  if (key.empty()) return {};
  return {"Authorization: Bearer " + key};
}

const ProviderShape kShape = {Url, Headers, RequestBody, ParseResponse};

}  // namespace ptxbench::agent_gateway::openai
