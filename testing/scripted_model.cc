#include "testing/scripted_model.h"

#include <httplib.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "daemon/http_thread.h"

namespace ptxbench::testing {
namespace {

using Json = nlohmann::json;

std::string Event(const std::string& name, const Json& data) {
  return absl::StrCat("event: ", name, "\ndata: ", data.dump(), "\n\n");
}

// `holder[key]` when it is a positive integer, else `otherwise`.
int64_t Positive(const Json& holder, const char* key, int64_t otherwise) {
  if (!holder.is_object() || !holder.contains(key)) return otherwise;
  const Json& v = holder[key];
  if (v.is_number_unsigned()) {
    return static_cast<int64_t>(
        std::min<uint64_t>(v.get<uint64_t>(), std::numeric_limits<int64_t>::max()));
  }
  if (v.is_number_integer() && v.get<int64_t>() > 0) return v.get<int64_t>();
  return otherwise;
}

bool Streams(const Json& request) {
  return request.is_object() && request.contains("stream") && request["stream"].is_boolean() &&
         request["stream"].get<bool>();
}

}  // namespace

struct ScriptedModel::Reply {
  std::string content_type;
  std::vector<std::string> parts;  // written in order, `delay` apart
  absl::Duration delay;
};

struct ScriptedModel::Impl {
  httplib::Server server;
  std::optional<daemon::HttpThread> thread;  // after the server: stopped first
};

ScriptedModel::ScriptedModel(agents::Wire wire, std::vector<Step> steps, Options options)
    : wire_(wire), steps_(std::move(steps)), options_(options), impl_(std::make_unique<Impl>()) {
  // Attacks send many calls at once, some answered slowly.
  impl_->server.new_task_queue = [] { return new httplib::ThreadPool(32); };
  auto record = [this](const httplib::Request& req) {
    Received r{req.method, req.target, "", req.body.substr(0, kMaxReceivedBody), req.body.size()};
    for (const auto& [name, value] : req.headers) {
      absl::StrAppend(&r.headers, absl::AsciiStrToLower(name), ": ", value, "\n");
    }
    std::lock_guard<std::mutex> lock(mu_);
    received_.push_back(std::move(r));
  };
  // Any other method is recorded and not found: a request smuggled past the
  // proxy shows here.
  auto other = [record](const httplib::Request& req, httplib::Response& res) {
    record(req);
    res.status = 404;
  };
  impl_->server.Get(R"(/.*)", other);
  impl_->server.Put(R"(/.*)", other);
  impl_->server.Patch(R"(/.*)", other);
  impl_->server.Delete(R"(/.*)", other);
  impl_->server.Options(R"(/.*)", other);
  impl_->server.Post(R"(/.*)", [this, record](const httplib::Request& req,
                                              httplib::Response& res) {
    record(req);
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
    if (req.body.find(kMarker) == std::string::npos) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        billed_.push_back({kInputTokens, kOutputTokens, ""});
      }
      res.set_content(Answer(body), "text/event-stream");
      return;
    }
    auto reply = std::make_shared<Reply>(Marked(req.target, body, req.body));
    if (reply->parts.size() == 1) {
      res.set_content(reply->parts[0], reply->content_type);
      return;
    }
    res.set_chunked_content_provider(reply->content_type,
                                     [reply](size_t, httplib::DataSink& sink) {
                                       for (size_t i = 0; i < reply->parts.size(); ++i) {
                                         if (i > 0) absl::SleepFor(reply->delay);
                                         const std::string& part = reply->parts[i];
                                         if (!sink.write(part.data(), part.size())) return false;
                                       }
                                       sink.done();
                                       return true;
                                     });
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

std::vector<ScriptedModel::Received> ScriptedModel::received() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_;
}

std::vector<ScriptedModel::Billed> ScriptedModel::billed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return billed_;
}

int64_t ScriptedModel::billed_tokens() const {
  int64_t total = 0;
  for (const Billed& b : billed()) total += b.input_tokens + b.output_tokens;
  return total;
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

namespace ptxbench::testing {

ScriptedModel::Reply ScriptedModel::Marked(const std::string& target, const Json& request,
                                           const std::string& raw) {
  int64_t output = kOutputTokens;
  if (absl::StrContains(raw, kGreedy)) {
    switch (wire_) {
      case agents::Wire::kAnthropicMessages:
        output = Positive(request, "max_tokens", kDefaultMaxTokens);
        break;
      case agents::Wire::kOpenAIResponses:
        output = Positive(request, "max_output_tokens", kDefaultMaxTokens);
        break;
      case agents::Wire::kGeminiGenerate: {
        const Json config = request.is_object() && request.contains("generationConfig")
                                ? request["generationConfig"]
                                : Json::object();
        output = Positive(config, "maxOutputTokens", kDefaultMaxTokens) *
                 Positive(config, "candidateCount", 1);
        break;
      }
    }
  }
  std::string attack;
  if (const size_t at = raw.find("@ptxb:atk:"); at != std::string::npos) {
    const size_t start = at + 10, end = raw.find('@', start);
    attack = raw.substr(start, end == std::string::npos ? 0 : end - start);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    billed_.push_back({kInputTokens, output, attack});
  }
  // The text: "done", then more of it when slow (a client that hangs up
  // at its first piece misses the rest), then kBulk's padding, in pieces of
  // 16 KiB.
  std::vector<std::string> texts = {"done"};
  if (absl::StrContains(raw, kSlow)) texts.insert(texts.end(), {" and", " more", " text."});
  if (absl::StrContains(raw, kBulk)) {
    for (size_t n = 0; n < options_.bulk_bytes; n += 16 << 10) {
      texts.push_back(std::string(16 << 10, 'x'));
    }
  }
  std::string all;
  for (const std::string& t : texts) all += t;
  Reply reply;
  reply.delay = absl::StrContains(raw, kSlow) ? options_.event_delay : absl::ZeroDuration();
  reply.content_type = "text/event-stream";
  switch (wire_) {
    case agents::Wire::kAnthropicMessages: {
      const Json usage = {{"input_tokens", kInputTokens}, {"output_tokens", output}};
      if (!Streams(request)) {
        reply.content_type = "application/json";
        reply.parts = {Json{{"id", "msg_marked"}, {"type", "message"}, {"role", "assistant"},
                            {"model", "pinned"},
                            {"content", {{{"type", "text"}, {"text", all}}}},
                            {"stop_reason", "end_turn"}, {"stop_sequence", nullptr},
                            {"usage", usage}}
                           .dump()};
        return reply;
      }
      reply.parts.push_back(Event(
          "message_start",
          {{"type", "message_start"},
           {"message", {{"id", "msg_marked"}, {"type", "message"}, {"role", "assistant"},
                        {"model", "pinned"}, {"content", Json::array()},
                        {"stop_reason", nullptr}, {"stop_sequence", nullptr},
                        {"usage", {{"input_tokens", kInputTokens}, {"output_tokens", 1}}}}}}) +
                            Event("content_block_start",
                                  {{"type", "content_block_start"}, {"index", 0},
                                   {"content_block", {{"type", "text"}, {"text", ""}}}}));
      for (const std::string& t : texts) {
        reply.parts.push_back(
            Event("content_block_delta", {{"type", "content_block_delta"}, {"index", 0},
                                          {"delta", {{"type", "text_delta"}, {"text", t}}}}));
      }
      reply.parts.push_back(
          Event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}));
      reply.parts.push_back(
          Event("message_delta", {{"type", "message_delta"},
                                  {"delta", {{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}}},
                                  {"usage", {{"output_tokens", output}}}}) +
          Event("message_stop", {{"type", "message_stop"}}));
      return reply;
    }
    case agents::Wire::kOpenAIResponses: {
      const Json item = {{"type", "message"}, {"id", "msg_marked"}, {"role", "assistant"},
                         {"status", "completed"},
                         {"content", {{{"type", "output_text"}, {"text", all},
                                       {"annotations", Json::array()}}}}};
      const Json response = {{"id", "resp_marked"}, {"object", "response"},
                             {"status", "completed"}, {"output", {item}},
                             {"usage", {{"input_tokens", kInputTokens},
                                        {"input_tokens_details", {{"cached_tokens", 0}}},
                                        {"output_tokens", output},
                                        {"output_tokens_details", {{"reasoning_tokens", 0}}},
                                        {"total_tokens", kInputTokens + output}}}};
      if (!Streams(request)) {
        reply.content_type = "application/json";
        reply.parts = {response.dump()};
        return reply;
      }
      auto event = [](const Json& data) { return Event(data["type"], data); };
      reply.parts.push_back(
          event({{"type", "response.created"},
                 {"response", {{"id", "resp_marked"}, {"object", "response"},
                               {"status", "in_progress"}, {"output", Json::array()}}}}) +
          event({{"type", "response.output_item.added"}, {"output_index", 0},
                 {"item", {{"type", "message"}, {"id", "msg_marked"}, {"role", "assistant"},
                           {"status", "in_progress"}, {"content", Json::array()}}}}));
      for (const std::string& t : texts) {
        reply.parts.push_back(event({{"type", "response.output_text.delta"},
                                     {"item_id", "msg_marked"}, {"output_index", 0},
                                     {"content_index", 0}, {"delta", t}}));
      }
      reply.parts.push_back(
          event({{"type", "response.output_item.done"}, {"output_index", 0}, {"item", item}}) +
          event({{"type", "response.completed"}, {"response", response}}));
      return reply;
    }
    case agents::Wire::kGeminiGenerate: {
      auto chunk = [](const std::string& text) {
        return Json{{"candidates",
                     {{{"content", {{"role", "model"}, {"parts", {{{"text", text}}}}}},
                       {"index", 0}}}}};
      };
      Json last = chunk("");
      last["candidates"][0]["finishReason"] = "STOP";
      last["usageMetadata"] = {{"promptTokenCount", kInputTokens},
                               {"candidatesTokenCount", output},
                               {"totalTokenCount", kInputTokens + output}};
      const bool stream = absl::StrContains(target, ":streamGenerateContent");
      if (!stream) {  // :generateContent: one object, the whole answer
        Json whole = last;
        whole["candidates"][0]["content"]["parts"][0]["text"] = all;
        reply.content_type = "application/json";
        reply.parts = {whole.dump()};
        return reply;
      }
      const size_t query = target.find('?');
      const bool sse = query != std::string::npos &&
                       absl::StrContains(target.substr(query), "alt=sse");
      std::vector<Json> chunks;
      for (const std::string& t : texts) chunks.push_back(chunk(t));
      chunks.push_back(last);
      if (!sse) {  // one JSON array, streamed as it is written
        reply.content_type = "application/json";
        for (size_t i = 0; i < chunks.size(); ++i) {
          reply.parts.push_back(absl::StrCat(i == 0 ? "[" : ",\r\n", chunks[i].dump(),
                                             i + 1 == chunks.size() ? "]" : ""));
        }
        return reply;
      }
      for (const Json& c : chunks) reply.parts.push_back(absl::StrCat("data: ", c.dump(), "\n\n"));
      return reply;
    }
  }
  return reply;
}

}  // namespace ptxbench::testing
