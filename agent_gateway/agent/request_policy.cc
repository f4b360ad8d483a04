#include "agent_gateway/agent/request_policy.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::agent_gateway {
namespace {

using Json = nlohmann::json;

// Whether a tool entry of `wire` runs at the provider; `name` says which.
// Tools the CLI runs itself (functions, custom tools, a local shell) stay.
bool IsServerTool(agents::Wire wire, const Json& tool, std::string* name) {
  if (!tool.is_object() || wire == agents::Wire::kGeminiGenerate) return false;
  *name = tool.value("type", "");
  static const char* const kResponses[] = {"web_search", "file_search", "code_interpreter",
                                           "image_generation", "computer_use", "mcp"};
  static const char* const kAnthropic[] = {"web_search", "web_fetch", "code_execution"};
  if (wire == agents::Wire::kOpenAIResponses) {
    for (const char* prefix : kResponses) {
      if (absl::StartsWith(*name, prefix)) return true;
    }
    return false;
  }
  for (const char* prefix : kAnthropic) {
    if (absl::StartsWith(*name, prefix)) return true;
  }
  return false;
}

void StripGeminiTools(Json& tools, PolicyEdits& edits) {
  static const char* const kServer[] = {"googleSearch", "googleSearchRetrieval", "urlContext",
                                        "codeExecution", "google_search", "code_execution",
                                        "url_context", "computerUse", "fileSearch"};
  Json kept = Json::array();
  for (Json& entry : tools) {
    if (!entry.is_object()) continue;
    for (const char* key : kServer) {
      if (entry.erase(key) > 0) edits.push_back(absl::StrCat("removed tool ", key));
    }
    if (!entry.empty()) kept.push_back(std::move(entry));
  }
  tools = std::move(kept);
}

// Lowers the integer at `holder[key]` to `cap`, or sets it when absent.
void Cap(Json& holder, const char* key, int64_t cap, PolicyEdits& edits) {
  if (holder.contains(key) && holder[key].is_number_integer() &&
      holder[key].get<int64_t>() <= cap) {
    return;
  }
  edits.push_back(absl::StrCat(key, " ", holder.contains(key) ? holder[key].dump() : "unset",
                               " -> ", cap));
  holder[key] = cap;
}

void PinGeminiModel(const std::string& model, std::string& path, PolicyEdits& edits) {
  const size_t start = path.find("/models/");
  if (start == std::string::npos) return;
  const size_t name = start + 8;
  const size_t end = path.find(':', name);
  if (end == std::string::npos) return;
  const std::string requested = path.substr(name, end - name);
  if (requested == model) return;
  edits.push_back(absl::StrCat("model ", requested, " -> ", model));
  path.replace(name, end - name, model);
}

}  // namespace

PolicyEdits ApplyRequestPolicy(agents::Wire wire, const RequestLimits& limits, Json& body,
                               std::string& path) {
  PolicyEdits edits;
  if (!body.is_object()) return edits;
  if (wire == agents::Wire::kGeminiGenerate) {
    PinGeminiModel(limits.model, path, edits);
  } else if (body.value("model", "") != limits.model) {
    edits.push_back(absl::StrCat("model ", body.value("model", ""), " -> ", limits.model));
    body["model"] = limits.model;
  }
  if (body.contains("tools") && body["tools"].is_array()) {
    if (wire == agents::Wire::kGeminiGenerate) {
      StripGeminiTools(body["tools"], edits);
    } else {
      Json kept = Json::array();
      for (Json& tool : body["tools"]) {
        std::string name;
        if (IsServerTool(wire, tool, &name)) {
          edits.push_back(absl::StrCat("removed tool ", name));
        } else {
          kept.push_back(std::move(tool));
        }
      }
      body["tools"] = std::move(kept);
    }
  }
  // Anthropic's MCP connector: remote MCP servers the provider calls.
  if (wire == agents::Wire::kAnthropicMessages && body.erase("mcp_servers") > 0) {
    edits.push_back("removed mcp_servers");
  }
  if (limits.max_output_tokens <= 0) return edits;  // a token counter: no answer to cap
  switch (wire) {
    case agents::Wire::kOpenAIResponses:
      Cap(body, "max_output_tokens", limits.max_output_tokens, edits);
      break;
    case agents::Wire::kAnthropicMessages:
      Cap(body, "max_tokens", limits.max_output_tokens, edits);
      break;
    case agents::Wire::kGeminiGenerate:
      if (!body.contains("generationConfig") || !body["generationConfig"].is_object()) {
        body["generationConfig"] = Json::object();
      }
      Cap(body["generationConfig"], "maxOutputTokens", limits.max_output_tokens, edits);
      break;
  }
  return edits;
}

}  // namespace ptxbench::agent_gateway
