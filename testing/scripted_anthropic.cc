#include "testing/scripted_anthropic.h"

#include <httplib.h>

#include "absl/strings/str_cat.h"

namespace ptxbench::testing {
namespace {

using Json = nlohmann::json;

std::string Event(const std::string& name, const Json& data) {
  return absl::StrCat("event: ", name, "\ndata: ", data.dump(), "\n\n");
}

}  // namespace

struct ScriptedAnthropic::Impl {
  httplib::Server server;
};

std::vector<Json> ToolResults(const Json& request) {
  std::vector<Json> out;
  if (!request.contains("messages") || !request["messages"].is_array()) return out;
  for (const Json& m : request["messages"]) {
    if (!m.contains("content") || !m["content"].is_array()) continue;
    for (const Json& c : m["content"]) {
      if (c.value("type", "") == "tool_result") out.push_back(c);
    }
  }
  return out;
}

ScriptedAnthropic::ScriptedAnthropic(std::vector<Step> steps)
    : steps_(std::move(steps)), impl_(std::make_unique<Impl>()) {
  impl_->server.Post(R"(/v1/messages.*)", [this](const httplib::Request& req,
                                                 httplib::Response& res) {
    if (req.path.find("count_tokens") != std::string::npos) {
      res.set_content(Json{{"input_tokens", kInputTokens}}.dump(), "application/json");
      return;
    }
    const Json body = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(body);
    }
    res.set_content(Answer(body), "text/event-stream");
  });
  port_ = impl_->server.bind_to_any_port("127.0.0.1");
  if (port_ > 0) thread_ = std::thread([this] { impl_->server.listen_after_bind(); });
}

ScriptedAnthropic::~ScriptedAnthropic() {
  impl_->server.stop();
  if (thread_.joinable()) thread_.join();
}

std::vector<Json> ScriptedAnthropic::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::string ScriptedAnthropic::Answer(const Json& request) {
  const size_t done = ToolResults(request).size();
  const bool has_tools = request.contains("tools") && !request["tools"].empty();
  Step step;
  if (has_tools && done < steps_.size()) {
    step = steps_[done];
  } else {
    step.text = "done";
  }
  std::string out = Event(
      "message_start",
      {{"type", "message_start"},
       {"message",
        {{"id", absl::StrCat("msg_", done)}, {"type", "message"}, {"role", "assistant"},
         {"model", request.value("model", "")}, {"content", Json::array()},
         {"stop_reason", nullptr}, {"stop_sequence", nullptr},
         {"usage", {{"input_tokens", kInputTokens}, {"output_tokens", 1}}}}}});
  Json block, delta;
  if (step.tool.empty()) {
    block = {{"type", "text"}, {"text", ""}};
    delta = {{"type", "text_delta"}, {"text", step.text}};
  } else {
    block = {{"type", "tool_use"}, {"id", absl::StrCat("toolu_", done)}, {"name", step.tool},
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

}  // namespace ptxbench::testing
