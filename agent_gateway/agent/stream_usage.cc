#include "agent_gateway/agent/stream_usage.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway {
namespace {

using Json = nlohmann::json;

int64_t Int(const Json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number_integer()) return 0;
  return object[key].get<int64_t>();
}

const Json& Member(const Json& object, const char* key) {
  static const Json kNull;
  return object.is_object() && object.contains(key) ? object[key] : kNull;
}

}  // namespace

void StreamUsage::Feed(absl::string_view bytes) {
  while (!bytes.empty()) {
    // Events end at a blank line ("\n\n"; "\r\n\r\n" has it after CR removal).
    const size_t end = bytes.find('\n');
    absl::string_view line = bytes.substr(0, end);
    bytes.remove_prefix(end == absl::string_view::npos ? bytes.size() : end + 1);
    if (end == absl::string_view::npos) {  // a line still arriving
      if (!skipping_) pending_.append(line.data(), line.size());
      if (pending_.size() > kMaxEvent) {
        pending_.clear();
        skipping_ = true;
      }
      return;
    }
    if (!skipping_) pending_.append(line.data(), line.size());
    pending_.push_back('\n');
    if (absl::StripSuffix(line, "\r").empty()) {  // a blank line: the event is whole
      if (!skipping_) Event(pending_);
      pending_.clear();
      skipping_ = false;
    } else if (pending_.size() > kMaxEvent) {
      pending_.clear();
      skipping_ = true;
    }
  }
}

void StreamUsage::Answer(absl::string_view body) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  // Gemini's streamGenerateContent without alt=sse answers one JSON array
  // of the chunks a stream would carry.
  if (wire_ == agents::Wire::kGeminiGenerate && j.is_array()) {
    for (const Json& chunk : j) {
      if (chunk.is_object()) Data(chunk.dump());
    }
    return;
  }
  if (!j.is_object()) return;
  switch (wire_) {
    case agents::Wire::kOpenAIResponses:  // the response object
      Data(Json{{"type", "response.completed"}, {"response", std::move(j)}}.dump());
      return;
    case agents::Wire::kAnthropicMessages:  // the message, with its final usage
      Data(Json{{"type", "message_start"}, {"message", std::move(j)}}.dump());
      finished_ = started_;
      return;
    case agents::Wire::kGeminiGenerate:  // one chunk with the whole answer
      Data(j.dump());
      return;
  }
}

void StreamUsage::Event(absl::string_view event) {
  std::string data;
  for (absl::string_view line : absl::StrSplit(event, '\n')) {
    line = absl::StripSuffix(line, "\r");
    if (!absl::ConsumePrefix(&line, "data:")) continue;
    absl::ConsumePrefix(&line, " ");
    if (!data.empty()) data.push_back('\n');
    data.append(line.data(), line.size());
  }
  if (!data.empty()) Data(data);
}

void StreamUsage::Data(const std::string& text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return;
  // value("type", "") would throw for a type that is not a string.
  const Json& kind = Member(j, "type");
  const std::string type = kind.is_string() ? kind.get<std::string>() : "";
  switch (wire_) {
    case agents::Wire::kOpenAIResponses: {
      if (type != "response.completed" && type != "response.incomplete" &&
          type != "response.failed") {
        return;
      }
      const Json& u = Member(Member(j, "response"), "usage");
      if (!u.is_object()) return;  // no usage: the answer is not counted whole
      usage_.input_tokens = Int(u, "input_tokens");
      usage_.cached_tokens = Int(Member(u, "input_tokens_details"), "cached_tokens");
      usage_.output_tokens = Int(u, "output_tokens");
      usage_.reasoning_tokens = Int(Member(u, "output_tokens_details"), "reasoning_tokens");
      finished_ = true;
      return;
    }
    case agents::Wire::kAnthropicMessages: {
      if (type == "message_start") {
        const Json& u = Member(Member(j, "message"), "usage");
        started_ = u.is_object();
        const int64_t read = Int(u, "cache_read_input_tokens");
        usage_.input_tokens =
            Int(u, "input_tokens") + read + Int(u, "cache_creation_input_tokens");
        usage_.cached_tokens = read;
        usage_.output_tokens = Int(u, "output_tokens");
      } else if (type == "message_delta") {
        // Cumulative for the message: the last one is the answer's.
        usage_.output_tokens = Int(Member(j, "usage"), "output_tokens");
      } else if (type == "message_stop") {
        finished_ = started_;
      }
      return;
    }
    case agents::Wire::kGeminiGenerate: {
      const Json& u = Member(j, "usageMetadata");
      if (!u.is_object()) return;
      const int64_t thoughts = Int(u, "thoughtsTokenCount");
      usage_.input_tokens = Int(u, "promptTokenCount");
      usage_.cached_tokens = Int(u, "cachedContentTokenCount");
      usage_.output_tokens = Int(u, "candidatesTokenCount") + thoughts;
      usage_.reasoning_tokens = thoughts;
      // Gemini's stream has no end event: a candidate's finishReason marks it.
      const Json& candidates = Member(j, "candidates");
      if (candidates.is_array() && !candidates.empty() &&
          candidates[0].is_object() && candidates[0].contains("finishReason")) {
        finished_ = true;
      }
      return;
    }
  }
}

}  // namespace ptxbench::agent_gateway
