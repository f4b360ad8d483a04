// The allow-lists of an agent's request bodies (request_allowlist.h).
#include "agent_gateway/agent/request_allowlist.h"

#include <initializer_list>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::agent_gateway {
namespace {

using Json = StrictJson;

enum class Type { kString, kInteger, kNumber, kBool, kObject, kArray, kStringOrArray, kStringOrObject };

struct Field {
  const char* name;
  Type type;
};

const char* Describe(Type t) {
  switch (t) {
    case Type::kString: return "a string";
    case Type::kInteger: return "an integer";
    case Type::kNumber: return "a number";
    case Type::kBool: return "true or false";
    case Type::kObject: return "an object";
    case Type::kArray: return "an array";
    case Type::kStringOrArray: return "a string or an array";
    case Type::kStringOrObject: return "a string or an object";
  }
  return "a value";
}

bool Is(const Json& v, Type t) {
  switch (t) {
    case Type::kString: return v.is_string();
    case Type::kInteger: return v.is_number_integer();
    case Type::kNumber: return v.is_number();
    case Type::kBool: return v.is_boolean();
    case Type::kObject: return v.is_object();
    case Type::kArray: return v.is_array();
    case Type::kStringOrArray: return v.is_string() || v.is_array();
    case Type::kStringOrObject: return v.is_string() || v.is_object();
  }
  return false;
}

absl::Status Refuse(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("ptxbench refused the request: ", JsonPath(path),
                                                 " ", why));
}

// Every key of `object` is one of `allowed`, of its type.
absl::Status Fields(const Json& object, const std::string& path,
                    std::initializer_list<Field> allowed) {
  if (!object.is_object()) return Refuse(path, "must be an object");
  for (const auto& [key, value] : object.items()) {
    const Field* field = nullptr;
    for (const Field& f : allowed) {
      if (key == f.name) field = &f;
    }
    if (field == nullptr) {
      return Refuse(JsonField(path, key), "is not accepted in a ptxbench agent session");
    }
    if (!Is(value, field->type)) {
      return Refuse(JsonField(path, key), absl::StrCat("must be ", Describe(field->type)));
    }
  }
  return absl::OkStatus();
}

absl::Status Required(const Json& object, const std::string& path, const char* key) {
  if (!object.contains(key)) return Refuse(JsonField(path, key), "is required");
  return absl::OkStatus();
}

// A string member or "" (types are checked by Fields first).
std::string Str(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// Whether `type` names a tool that runs at the provider, however it is
// spelt (case, separators, padding): the refusal then says so.
bool ProviderTool(absl::string_view type) {
  std::string plain;
  for (char c : type) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) {
      plain.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
    }
  }
  for (absl::string_view p :
       {"websearch", "webfetch", "codeexecution", "codeinterpreter", "filesearch", "computer",
        "mcp", "imagegeneration", "toolsearch", "google", "retrieval", "urlcontext", "bash",
        "texteditor", "memory", "container", "shell", "applypatch", "enterprisewebsearch"}) {
    if (absl::StartsWith(plain, p)) return true;
  }
  return false;
}

absl::Status ToolRefused(const std::string& path, absl::string_view type) {
  if (ProviderTool(type)) {
    return Refuse(path, absl::StrCat("is a '", type,
                                     "' tool, which runs at the provider, outside the session's "
                                     "sandbox: not allowed"));
  }
  return Refuse(path, absl::StrCat("is a tool of type '", type, "', not one ptxbench allows"));
}

// ---- Anthropic Messages -------------------------------------------------

// A prompt cache marker, where the block has one: only the default (5 minute)
// cache, which the registry's prices describe. A longer one writes at twice
// the input price, which the budget would not see.
absl::Status CacheControl(const Json& block, const std::string& path) {
  auto cache = block.find("cache_control");
  if (cache == block.end()) return absl::OkStatus();
  const std::string p = JsonField(path, "cache_control");
  if (absl::Status s = Fields(*cache, p, {{"type", Type::kString}, {"ttl", Type::kString}});
      !s.ok()) {
    return s;
  }
  if (Str(*cache, "type") != "ephemeral" || (cache->contains("ttl") && Str(*cache, "ttl") != "5m")) {
    return Refuse(p, "may only ask for the default cache (ephemeral, 5m): a longer one is priced "
                     "above the registry's input price");
  }
  return absl::OkStatus();
}

absl::Status AnthropicBlock(const Json& block, const std::string& path, bool in_result,
                            int* media) {
  if (!block.is_object()) return Refuse(path, "must be an object");
  if (absl::Status s = CacheControl(block, path); !s.ok()) return s;
  const std::string type = Str(block, "type");
  if (type == "text" || type == "thinking" || type == "redacted_thinking" ||
      (in_result && type == "tool_reference")) {
    return absl::OkStatus();
  }
  if (!in_result && type == "tool_use") return absl::OkStatus();
  if (type == "image" || type == "document") {
    auto source = block.find("source");
    if (source == block.end() || !source->is_object()) {
      return Refuse(JsonField(path, "source"), "must be an object");
    }
    const std::string kind = Str(*source, "type");
    const bool inline_data = type == "image" ? kind == "base64" : kind == "text" || kind == "content";
    if (!inline_data) {
      return Refuse(JsonField(JsonField(path, "source"), "type"),
                    absl::StrCat("'", kind, "' is refused: a ", type,
                                 " travels inline (an image as base64, a document as text); a "
                                 "source by URL or file id is fetched by the provider"));
    }
    ++*media;
    return absl::OkStatus();
  }
  if (!in_result && type == "tool_result") {
    auto content = block.find("content");
    if (content == block.end() || content->is_string()) return absl::OkStatus();
    if (!content->is_array()) return Refuse(JsonField(path, "content"), "must be a string or an array");
    for (size_t i = 0; i < content->size(); ++i) {
      if (absl::Status s = AnthropicBlock((*content)[i], JsonIndex(JsonField(path, "content"), i),
                                          /*in_result=*/true, media);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
  return Refuse(JsonField(path, "type"),
                absl::StrCat("'", type, "' is not a content block ptxbench allows"));
}

absl::Status AnthropicContent(const Json& content, const std::string& path, int* media) {
  if (content.is_string()) return absl::OkStatus();
  if (!content.is_array()) return Refuse(path, "must be a string or an array");
  for (size_t i = 0; i < content.size(); ++i) {
    if (absl::Status s = AnthropicBlock(content[i], JsonIndex(path, i), false, media); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status AnthropicTool(const Json& tool, const std::string& path) {
  if (!tool.is_object()) return Refuse(path, "must be an object");
  const std::string type = Str(tool, "type");
  if (tool.contains("type") && type != "custom") return ToolRefused(path, type);
  if (absl::Status s = CacheControl(tool, path); !s.ok()) return s;
  if (absl::Status s = Fields(tool, path,
                              {{"type", Type::kString},
                               {"name", Type::kString},
                               {"description", Type::kString},
                               {"input_schema", Type::kObject},
                               {"cache_control", Type::kObject},
                               {"defer_loading", Type::kBool},
                               {"strict", Type::kBool},
                               {"input_examples", Type::kArray}});
      !s.ok()) {
    return s;
  }
  return Required(tool, path, "name");
}

absl::Status CheckAnthropic(const Json& body, RouteKind kind, CheckedRequest* out) {
  if (absl::Status s = Fields(body, "",
                              {{"model", Type::kString},
                               {"messages", Type::kArray},
                               {"system", Type::kStringOrArray},
                               {"max_tokens", Type::kInteger},
                               {"metadata", Type::kObject},
                               {"stop_sequences", Type::kArray},
                               {"stream", Type::kBool},
                               {"temperature", Type::kNumber},
                               {"top_p", Type::kNumber},
                               {"top_k", Type::kInteger},
                               {"tools", Type::kArray},
                               {"tool_choice", Type::kObject},
                               {"thinking", Type::kObject},
                               {"context_management", Type::kObject},
                               {"output_config", Type::kObject},
                               {"output_format", Type::kObject}});
      !s.ok()) {
    return s;
  }
  for (const char* key : {"model", "messages"}) {
    if (absl::Status s = Required(body, "", key); !s.ok()) return s;
  }
  if (kind == RouteKind::kModelCall) {
    if (absl::Status s = Required(body, "", "max_tokens"); !s.ok()) return s;
  }
  const Json& messages = body["messages"];
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string path = JsonIndex("messages", i);
    if (absl::Status s = Fields(messages[i], path, {{"role", Type::kString},
                                                    {"content", Type::kStringOrArray}});
        !s.ok()) {
      return s;
    }
    const std::string role = Str(messages[i], "role");
    // Claude Code 2.1 sends system messages inside the conversation too.
    if (role != "user" && role != "assistant" && role != "system") {
      return Refuse(JsonField(path, "role"),
                    absl::StrCat("must be 'user', 'assistant' or 'system', not ",
                                 JsonForError(messages[i].value("role", Json()))));
    }
    if (messages[i].contains("content")) {
      if (absl::Status s = AnthropicContent(messages[i]["content"], JsonField(path, "content"),
                                            &out->media_parts);
          !s.ok()) {
        return s;
      }
    }
  }
  if (body.contains("system") && body["system"].is_array()) {
    for (size_t i = 0; i < body["system"].size(); ++i) {
      const Json& block = body["system"][i];
      if (!block.is_object() || Str(block, "type") != "text") {
        return Refuse(JsonIndex("system", i), "must be a text block");
      }
      if (absl::Status s = CacheControl(block, JsonIndex("system", i)); !s.ok()) return s;
    }
  }
  if (body.contains("tools")) {
    for (size_t i = 0; i < body["tools"].size(); ++i) {
      if (absl::Status s = AnthropicTool(body["tools"][i], JsonIndex("tools", i)); !s.ok()) return s;
    }
  }
  if (body.contains("tool_choice")) {
    const std::string type = Str(body["tool_choice"], "type");
    if (type != "auto" && type != "any" && type != "tool" && type != "none") {
      return Refuse("tool_choice.type", "must be auto, any, tool or none");
    }
  }
  if (body.contains("thinking")) {
    if (absl::Status s = Fields(body["thinking"], "thinking", {{"type", Type::kString},
                                                               {"budget_tokens", Type::kInteger},
                                                               {"display", Type::kString}});
        !s.ok()) {
      return s;
    }
  }
  out->requested_model = Str(body, "model");
  if (body.contains("max_tokens")) out->requested_max_output = body["max_tokens"].get<int64_t>();
  return absl::OkStatus();
}

// ---- OpenAI Responses ---------------------------------------------------

absl::Status ResponsesPart(const Json& part, const std::string& path, int* media) {
  if (!part.is_object()) return Refuse(path, "must be an object");
  const std::string type = Str(part, "type");
  if (type == "input_text" || type == "output_text" || type == "refusal" ||
      type == "summary_text" || type == "reasoning_text") {
    return absl::OkStatus();
  }
  if (type == "input_image") {
    if (part.contains("file_id") || !part.contains("image_url") || !part["image_url"].is_string() ||
        !absl::StartsWith(part["image_url"].get<std::string>(), "data:")) {
      return Refuse(path, "is an image by URL or file id, which the provider fetches: an image "
                          "travels inline (a data: URL)");
    }
    ++*media;
    return absl::OkStatus();
  }
  if (type == "input_file") {
    if (part.contains("file_id") || part.contains("file_url") || !part.contains("file_data")) {
      return Refuse(path, "is a file by URL or file id, which the provider fetches: a file "
                          "travels inline (file_data)");
    }
    ++*media;
    return absl::OkStatus();
  }
  return Refuse(JsonField(path, "type"),
                absl::StrCat("'", type, "' is not a content part ptxbench allows"));
}

absl::Status ResponsesParts(const Json& content, const std::string& path, int* media) {
  if (content.is_string()) return absl::OkStatus();
  if (!content.is_array()) return Refuse(path, "must be a string or an array");
  for (size_t i = 0; i < content.size(); ++i) {
    if (absl::Status s = ResponsesPart(content[i], JsonIndex(path, i), media); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ResponsesTool(const Json& tool, const std::string& path, bool nested);

absl::Status ResponsesItem(const Json& item, const std::string& path, int* media) {
  if (!item.is_object()) return Refuse(path, "must be an object");
  const std::string type = item.contains("type") ? Str(item, "type") : "message";
  // Codex 0.171 declares its tools in the conversation (an item of this
  // type) instead of the request's "tools": the same list holds for them.
  if (type == "additional_tools") {
    auto tools = item.find("tools");
    if (tools == item.end()) return absl::OkStatus();
    if (!tools->is_array()) return Refuse(JsonField(path, "tools"), "must be an array");
    for (size_t i = 0; i < tools->size(); ++i) {
      if (absl::Status s = ResponsesTool((*tools)[i], JsonIndex(JsonField(path, "tools"), i), false);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
  if (type == "message") {
    return item.contains("content") ? ResponsesParts(item["content"], JsonField(path, "content"), media)
                                    : absl::OkStatus();
  }
  if (type == "function_call_output" || type == "custom_tool_call_output") {
    return item.contains("output") ? ResponsesParts(item["output"], JsonField(path, "output"), media)
                                   : absl::OkStatus();
  }
  for (const char* allowed : {"function_call", "custom_tool_call", "reasoning", "local_shell_call",
                              "local_shell_call_output", "compaction", "compaction_summary"}) {
    if (type == allowed) return absl::OkStatus();
  }
  return Refuse(JsonField(path, "type"),
                absl::StrCat("'", type, "' is not an input item ptxbench allows (items stored "
                                        "at the provider or made by its own tools are not)"));
}

absl::Status ResponsesTool(const Json& tool, const std::string& path, bool nested) {
  if (!tool.is_object()) return Refuse(path, "must be an object");
  const std::string type = Str(tool, "type");
  if (type == "function" || type == "custom" || (!nested && type == "local_shell")) {
    return absl::OkStatus();
  }
  if (type == "namespace" && !nested) {
    auto tools = tool.find("tools");
    if (tools == tool.end()) return absl::OkStatus();
    if (!tools->is_array()) return Refuse(JsonField(path, "tools"), "must be an array");
    for (size_t i = 0; i < tools->size(); ++i) {
      if (absl::Status s = ResponsesTool((*tools)[i], JsonIndex(JsonField(path, "tools"), i), true);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
  return ToolRefused(path, type);
}

absl::Status CheckResponses(const Json& body, CheckedRequest* out) {
  if (absl::Status s = Fields(body, "",
                              {{"model", Type::kString},
                               {"input", Type::kStringOrArray},
                               {"instructions", Type::kString},
                               {"tools", Type::kArray},
                               {"tool_choice", Type::kStringOrObject},
                               {"parallel_tool_calls", Type::kBool},
                               {"reasoning", Type::kObject},
                               {"store", Type::kBool},
                               {"stream", Type::kBool},
                               {"include", Type::kArray},
                               {"prompt_cache_key", Type::kString},
                               {"prompt_cache_retention", Type::kString},
                               {"text", Type::kObject},
                               {"max_output_tokens", Type::kInteger},
                               {"temperature", Type::kNumber},
                               {"top_p", Type::kNumber},
                               {"metadata", Type::kObject},
                               {"client_metadata", Type::kObject},
                               {"truncation", Type::kString},
                               {"user", Type::kString},
                               {"safety_identifier", Type::kString},
                               {"top_logprobs", Type::kInteger},
                               {"stream_options", Type::kObject},
                               {"max_tool_calls", Type::kInteger}});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Required(body, "", "model"); !s.ok()) return s;
  // A stored response is readable later by its id, from any session of the
  // same key.
  if (body.contains("store") && body["store"].get<bool>()) {
    return Refuse("store", "must be false: a session's answers are not stored at the provider");
  }
  if (body.contains("include")) {
    for (size_t i = 0; i < body["include"].size(); ++i) {
      if (body["include"][i] != "reasoning.encrypted_content") {
        return Refuse(JsonIndex("include", i), "may only be reasoning.encrypted_content");
      }
    }
  }
  if (body.contains("input") && body["input"].is_array()) {
    for (size_t i = 0; i < body["input"].size(); ++i) {
      if (absl::Status s = ResponsesItem(body["input"][i], JsonIndex("input", i), &out->media_parts);
          !s.ok()) {
        return s;
      }
    }
  }
  if (body.contains("tools")) {
    for (size_t i = 0; i < body["tools"].size(); ++i) {
      if (absl::Status s = ResponsesTool(body["tools"][i], JsonIndex("tools", i), false); !s.ok()) {
        return s;
      }
    }
  }
  out->requested_model = Str(body, "model");
  if (body.contains("max_output_tokens")) {
    out->requested_max_output = body["max_output_tokens"].get<int64_t>();
  }
  return absl::OkStatus();
}

// ---- Gemini -------------------------------------------------------------

absl::Status GeminiParts(const Json& content, const std::string& path, int* media) {
  if (absl::Status s = Fields(content, path, {{"role", Type::kString}, {"parts", Type::kArray}});
      !s.ok()) {
    return s;
  }
  if (!content.contains("parts")) return absl::OkStatus();
  const Json& parts = content["parts"];
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string p = JsonIndex(JsonField(path, "parts"), i);
    if (absl::Status s = Fields(parts[i], p,
                                {{"text", Type::kString},
                                 {"inlineData", Type::kObject},
                                 {"functionCall", Type::kObject},
                                 {"functionResponse", Type::kObject},
                                 {"thought", Type::kBool},
                                 {"thoughtSignature", Type::kString}});
        !s.ok()) {
      return s;
    }
    if (parts[i].contains("inlineData")) ++*media;
  }
  return absl::OkStatus();
}

absl::Status CheckGeminiGenerate(const Json& body, const std::string& path, bool with_model,
                                 CheckedRequest* out) {
  std::initializer_list<Field> fields = {{"contents", Type::kArray},
                                         {"systemInstruction", Type::kObject},
                                         {"tools", Type::kArray},
                                         {"toolConfig", Type::kObject},
                                         {"generationConfig", Type::kObject},
                                         {"safetySettings", Type::kArray},
                                         {"model", Type::kString}};
  if (absl::Status s = Fields(body, path, fields); !s.ok()) return s;
  if (!with_model && body.contains("model")) {
    return Refuse(JsonField(path, "model"), "is not accepted: the path names the model");
  }
  if (body.contains("contents")) {
    for (size_t i = 0; i < body["contents"].size(); ++i) {
      if (absl::Status s = GeminiParts(body["contents"][i],
                                       JsonIndex(JsonField(path, "contents"), i), &out->media_parts);
          !s.ok()) {
        return s;
      }
    }
  }
  if (body.contains("systemInstruction")) {
    if (absl::Status s = GeminiParts(body["systemInstruction"],
                                     JsonField(path, "systemInstruction"), &out->media_parts);
        !s.ok()) {
      return s;
    }
  }
  if (body.contains("tools")) {
    const Json& tools = body["tools"];
    for (size_t i = 0; i < tools.size(); ++i) {
      const std::string p = JsonIndex(JsonField(path, "tools"), i);
      if (!tools[i].is_object()) return Refuse(p, "must be an object");
      for (const auto& [key, value] : tools[i].items()) {
        if (key != "functionDeclarations") return ToolRefused(JsonField(p, key), key);
        if (!value.is_array()) return Refuse(JsonField(p, key), "must be an array");
      }
    }
  }
  if (body.contains("generationConfig")) {
    const Json& config = body["generationConfig"];
    const std::string p = JsonField(path, "generationConfig");
    if (absl::Status s = Fields(config, p,
                                {{"temperature", Type::kNumber},
                                 {"topP", Type::kNumber},
                                 {"topK", Type::kNumber},
                                 {"candidateCount", Type::kInteger},
                                 {"maxOutputTokens", Type::kInteger},
                                 {"stopSequences", Type::kArray},
                                 {"responseMimeType", Type::kString},
                                 {"responseSchema", Type::kObject},
                                 {"responseJsonSchema", Type::kObject},
                                 {"thinkingConfig", Type::kObject},
                                 {"seed", Type::kInteger},
                                 {"presencePenalty", Type::kNumber},
                                 {"frequencyPenalty", Type::kNumber},
                                 {"responseLogprobs", Type::kBool},
                                 {"logprobs", Type::kInteger}});
        !s.ok()) {
      return s;
    }
    // Each candidate is an answer of its own, priced as one.
    if (config.contains("candidateCount") && config["candidateCount"] != 1) {
      return Refuse(JsonField(p, "candidateCount"), "must be 1");
    }
    if (config.contains("thinkingConfig")) {
      if (absl::Status s = Fields(config["thinkingConfig"], JsonField(p, "thinkingConfig"),
                                  {{"thinkingBudget", Type::kInteger},
                                   {"includeThoughts", Type::kBool},
                                   {"thinkingLevel", Type::kString}});
          !s.ok()) {
        return s;
      }
    }
    if (config.contains("maxOutputTokens")) {
      out->requested_max_output = config["maxOutputTokens"].get<int64_t>();
    }
  }
  return absl::OkStatus();
}

absl::Status CheckGemini(const Json& body, RouteKind kind, CheckedRequest* out) {
  if (kind == RouteKind::kModelCall) return CheckGeminiGenerate(body, "", false, out);
  // countTokens: the contents alone, or a whole generate request.
  if (absl::Status s = Fields(body, "", {{"contents", Type::kArray},
                                         {"generateContentRequest", Type::kObject}});
      !s.ok()) {
    return s;
  }
  if (body.contains("generateContentRequest")) {
    return CheckGeminiGenerate(body["generateContentRequest"], "generateContentRequest", true, out);
  }
  return CheckGeminiGenerate(body, "", false, out);
}

}  // namespace

absl::StatusOr<CheckedRequest> CheckRequestBody(agents::Wire wire, RouteKind kind,
                                                absl::string_view text) {
  if (absl::Status s = CheckJsonDepth(text, kMaxJsonDepth, "ptxbench refused the request body");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<StrictJson> parsed = ParseStrictJson(text, "ptxbench refused the request body");
  if (!parsed.ok()) return parsed.status();
  CheckedRequest out;
  out.body = *std::move(parsed);
  if (!out.body.is_object()) {
    return absl::InvalidArgumentError("ptxbench refused the request: the body is not a JSON object");
  }
  absl::Status checked;
  switch (wire) {
    case agents::Wire::kAnthropicMessages: checked = CheckAnthropic(out.body, kind, &out); break;
    case agents::Wire::kOpenAIResponses: checked = CheckResponses(out.body, &out); break;
    case agents::Wire::kGeminiGenerate: checked = CheckGemini(out.body, kind, &out); break;
  }
  if (!checked.ok()) return checked;
  if (out.requested_max_output < 0) {
    return absl::InvalidArgumentError("ptxbench refused the request: a negative output limit");
  }
  return out;
}

}  // namespace ptxbench::agent_gateway
