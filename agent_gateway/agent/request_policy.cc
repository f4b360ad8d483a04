// The proxy's edits of an allowed request (request_policy.h).
#include "agent_gateway/agent/request_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ptxbench::agent_gateway {
namespace {

using Json = StrictJson;

// Lowers the integer at `holder[key]` to `cap`, or sets it when absent. The
// allow-lists made sure a present one is an integer.
void Cap(Json& holder, const char* key, int64_t cap, PolicyEdits& edits) {
  auto it = holder.find(key);
  if (it != holder.end() && it->is_number_integer() && it->get<int64_t>() <= cap) return;
  edits.push_back(absl::StrCat(key, " ", it != holder.end() ? it->dump() : "unset", " -> ", cap));
  holder[key] = cap;
}

// Anthropic's extended thinking spends its budget inside max_tokens, which
// must stay above it: a budget the cap no longer covers shrinks, or, where
// no budget the API takes (1,024 at least) fits, thinking is turned off.
void CapAnthropicThinking(Json& body, int64_t max_tokens, PolicyEdits& edits) {
  auto thinking = body.find("thinking");
  if (thinking == body.end() || !thinking->is_object()) return;
  auto budget = thinking->find("budget_tokens");
  if (budget == thinking->end() || !budget->is_number_integer() ||
      budget->get<int64_t>() < max_tokens) {
    return;
  }
  if (max_tokens > 1024) {
    edits.push_back(absl::StrCat("thinking.budget_tokens ", budget->dump(), " -> ", max_tokens - 1));
    *budget = max_tokens - 1;
    return;
  }
  edits.push_back(absl::StrCat("thinking off: ", max_tokens, " output tokens left"));
  *thinking = Json{{"type", "disabled"}};
}

}  // namespace

PolicyEdits ApplyRequestPolicy(agents::Wire wire, const RequestLimits& limits, Json& body) {
  PolicyEdits edits;
  if (!body.is_object()) return edits;
  switch (wire) {
    case agents::Wire::kAnthropicMessages:
    case agents::Wire::kOpenAIResponses: {
      auto model = body.find("model");
      const std::string asked = model != body.end() && model->is_string() ? model->get<std::string>() : "";
      if (asked != limits.model) {
        edits.push_back(absl::StrCat("model ", asked, " -> ", limits.model));
        body["model"] = limits.model;
      }
      break;
    }
    case agents::Wire::kGeminiGenerate: {
      auto request = body.find("generateContentRequest");
      if (request != body.end() && request->is_object() && request->contains("model")) {
        (*request)["model"] = absl::StrCat("models/", limits.model);
      }
      break;
    }
  }
  if (limits.max_output_tokens <= 0) return edits;  // a token counter: no answer to cap
  switch (wire) {
    case agents::Wire::kOpenAIResponses:
      Cap(body, "max_output_tokens", limits.max_output_tokens, edits);
      break;
    case agents::Wire::kAnthropicMessages:
      Cap(body, "max_tokens", limits.max_output_tokens, edits);
      CapAnthropicThinking(body, body["max_tokens"].get<int64_t>(), edits);
      break;
    case agents::Wire::kGeminiGenerate: {
      if (!body.contains("generationConfig") || !body["generationConfig"].is_object()) {
        body["generationConfig"] = Json::object();
      }
      Json& config = body["generationConfig"];
      Cap(config, "maxOutputTokens", limits.max_output_tokens, edits);
      // Thinking tokens are output tokens: a budget over the cap (or the
      // model's own, -1) is brought to it.
      auto thinking = config.find("thinkingConfig");
      if (thinking != config.end() && thinking->is_object()) {
        auto budget = thinking->find("thinkingBudget");
        // -1 (the model decides) is left alone where the cap is past any
        // model's thinking limit (32,768): a budget past the model's own is
        // refused by the API.
        if (budget != thinking->end() && budget->is_number_integer() &&
            (budget->get<int64_t>() > limits.max_output_tokens ||
             (budget->get<int64_t>() < 0 && limits.max_output_tokens < 32768))) {
          edits.push_back(absl::StrCat("thinkingBudget ", budget->dump(), " -> ",
                                       limits.max_output_tokens));
          *budget = limits.max_output_tokens;
        }
      }
      break;
    }
  }
  return edits;
}

}  // namespace ptxbench::agent_gateway
