#include "testing/scripted_model.h"

#include <httplib.h>

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "daemon/http_thread.h"

namespace ptxbench::testing {
namespace {

using Json = nlohmann::json;

std::string Event(const std::string& name, const Json& data) {
  return absl::StrCat("event: ", name, "\ndata: ", data.dump(), "\n\n");
}

}  // namespace

struct ScriptedModel::Impl {
  httplib::Server server;
  std::optional<daemon::HttpThread> thread;  // after the server: stopped first
};

ScriptedModel::ScriptedModel(agents::Wire wire, std::vector<Step> steps)
    : wire_(wire), steps_(std::move(steps)), impl_(std::make_unique<Impl>()) {
  impl_->server.Post(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
    if (req.path.find("count_tokens") != std::string::npos ||
        req.path.find(":countTokens") != std::string::npos ||
        req.path.find("/responses/input_tokens") != std::string::npos) {
      res.set_content(Json{{"input_tokens", kInputTokens}, {"totalTokens", kInputTokens}}.dump(),
                      "application/json");
      return;
    }
    const Json body = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(body);
      std::string headers;
      for (const auto& [name, value] : req.headers) {
        absl::StrAppend(&headers, absl::AsciiStrToLower(name), ": ", value, "\n");
      }
      headers_.push_back(std::move(headers));
      paths_.push_back(req.path);
    }
    res.set_content(Answer(body), "text/event-stream");
  });
  port_ = impl_->server.bind_to_any_port("127.0.0.1");
  if (port_ <= 0) return;
  impl_->thread.emplace(impl_->server);
}

// Stopped before the members its handlers use are destroyed.
ScriptedModel::~ScriptedModel() { impl_->thread.reset(); }

std::vector<Json> ScriptedModel::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::vector<std::string> ScriptedModel::headers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return headers_;
}

std::vector<std::string> ScriptedModel::paths() const {
  std::lock_guard<std::mutex> lock(mu_);
  return paths_;
}

std::vector<Json> ScriptedModel::ToolResults(const Json& request) const {
  std::vector<Json> out;
  // Where each wire keeps the conversation, and how it marks a tool's result.
  const char* list = wire_ == agents::Wire::kOpenAIResponses  ? "input"
                     : wire_ == agents::Wire::kGeminiGenerate ? "contents"
                                                              : "messages";
  if (!request.is_object() || !request.contains(list) || !request[list].is_array()) return out;
  for (const Json& item : request[list]) {
    if (!item.is_object()) continue;
    if (wire_ == agents::Wire::kOpenAIResponses) {
      const std::string type = item.value("type", "");
      if (type.size() > 7 && type.compare(type.size() - 7, 7, "_output") == 0) out.push_back(item);
      continue;
    }
    const char* parts = wire_ == agents::Wire::kGeminiGenerate ? "parts" : "content";
    if (!item.contains(parts) || !item[parts].is_array()) continue;
    for (const Json& part : item[parts]) {
      if (!part.is_object()) continue;
      if (part.value("type", "") == "tool_result" || part.contains("functionResponse")) {
        out.push_back(part);
      }
    }
  }
  return out;
}

std::string ScriptedModel::Answer(const Json& request) {
  const size_t done = ToolResults(request).size();
  // A request that offers no tools (a CLI's side request, e.g. for a title)
  // gets text. Codex 0.171.0 sends no "tools" list, only "tool_choice".
  const bool has_tools = request.is_object() &&
                         ((request.contains("tools") && !request["tools"].empty()) ||
                          request.contains("tool_choice"));
  Step step;
  if (has_tools && done < steps_.size()) {
    step = steps_[done];
  } else {
    step.text = "done";
  }
  switch (wire_) {
    case agents::Wire::kAnthropicMessages:
      return AnthropicStream(step, done, request);
    case agents::Wire::kOpenAIResponses:
      return ResponsesStream(step, done);
    case agents::Wire::kGeminiGenerate:
      return GeminiStream(step);
  }
  return "";
}

std::string ScriptedModel::AnthropicStream(const Step& step, size_t index,
                                           const Json& request) const {
  std::string out = Event(
      "message_start",
      {{"type", "message_start"},
       {"message",
        {{"id", absl::StrCat("msg_", index)}, {"type", "message"}, {"role", "assistant"},
         {"model", request.value("model", "")}, {"content", Json::array()},
         {"stop_reason", nullptr}, {"stop_sequence", nullptr},
         {"usage", {{"input_tokens", kInputTokens}, {"output_tokens", 1}}}}}});
  Json block, delta;
  if (step.tool.empty()) {
    block = {{"type", "text"}, {"text", ""}};
    delta = {{"type", "text_delta"}, {"text", step.text}};
  } else {
    block = {{"type", "tool_use"}, {"id", absl::StrCat("toolu_", index)}, {"name", step.tool},
             {"input", Json::object()}};
    delta = {{"type", "input_json_delta"}, {"partial_json", step.input.dump()}};
  }
  out += Event("content_block_start",
               {{"type", "content_block_start"}, {"index", 0}, {"content_block", block}});
  out += Event("content_block_delta",
               {{"type", "content_block_delta"}, {"index", 0}, {"delta", delta}});
  out += Event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}});
  out += Event("message_delta",
               {{"type", "message_delta"},
                {"delta", {{"stop_reason", step.tool.empty() ? "end_turn" : "tool_use"},
                           {"stop_sequence", nullptr}}},
                {"usage", {{"output_tokens", kOutputTokens}}}});
  out += Event("message_stop", {{"type", "message_stop"}});
  return out;
}

std::string ScriptedModel::ResponsesStream(const Step& step, size_t index) const {
  const std::string id = absl::StrCat("resp_", index);
  Json item;
  if (step.tool.empty()) {
    item = {{"type", "message"}, {"id", absl::StrCat("msg_", index)}, {"role", "assistant"},
            {"status", "completed"},
            {"content", {{{"type", "output_text"}, {"text", step.text},
                          {"annotations", Json::array()}}}}};
  } else {
    item = {{"type", "function_call"}, {"id", absl::StrCat("fc_", index)},
            {"call_id", absl::StrCat("call_", index)}, {"name", step.tool},
            {"arguments", step.input.dump()}};
    if (!step.tool_namespace.empty()) item["namespace"] = step.tool_namespace;
  }
  const Json usage = {{"input_tokens", kInputTokens},
                      {"input_tokens_details", {{"cached_tokens", 0}}},
                      {"output_tokens", kOutputTokens},
                      {"output_tokens_details", {{"reasoning_tokens", 0}}},
                      {"total_tokens", kInputTokens + kOutputTokens}};
  auto event = [](const Json& data) { return Event(data["type"], data); };
  return event({{"type", "response.created"},
                {"response", {{"id", id}, {"object", "response"}, {"status", "in_progress"},
                              {"output", Json::array()}}}}) +
         event({{"type", "response.output_item.added"}, {"output_index", 0}, {"item", item}}) +
         event({{"type", "response.output_item.done"}, {"output_index", 0}, {"item", item}}) +
         event({{"type", "response.completed"},
                {"response", {{"id", id}, {"object", "response"}, {"status", "completed"},
                              {"output", {item}}, {"usage", usage}}}});
}

std::string ScriptedModel::GeminiStream(const Step& step) const {
  const Json part = step.tool.empty()
                        ? Json{{"text", step.text}}
                        : Json{{"functionCall", {{"name", step.tool}, {"args", step.input}}}};
  const Json chunk = {
      {"candidates",
       {{{"content", {{"role", "model"}, {"parts", {part}}}}, {"finishReason", "STOP"},
         {"index", 0}}}},
      {"usageMetadata",
       {{"promptTokenCount", kInputTokens}, {"candidatesTokenCount", kOutputTokens},
        {"totalTokenCount", kInputTokens + kOutputTokens}}}};
  return absl::StrCat("data: ", chunk.dump(), "\n\n");
}

}  // namespace ptxbench::testing
