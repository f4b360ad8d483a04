#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_STREAM_USAGE_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_STREAM_USAGE_H_

// The tokens of one streamed model answer, as the provider itself counts
// them, read from the server-sent events the model proxy relays (never from
// what the agent CLI reports: Claude Code priced an unknown model with its
// own table). Fed the bytes as they pass, in chunks of any size:
//  - OpenAI Responses: response.completed's usage (input_tokens with
//    input_tokens_details.cached_tokens, output_tokens with
//    output_tokens_details.reasoning_tokens);
//  - Anthropic Messages: message_start's usage (input_tokens,
//    cache_read_input_tokens, cache_creation_input_tokens) and the last
//    message_delta's output_tokens;
//  - Gemini: the last chunk's usageMetadata (promptTokenCount with
//    cachedContentTokenCount, candidatesTokenCount plus thoughtsTokenCount).
// The result follows v1::Usage's convention (model_registry.h CostUsd):
// cached tokens are counted inside input, reasoning tokens inside output. It
// is a plain struct (no protobuf), so the proxy's fuzz target links it alone.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "agents/clis.h"

namespace ptxbench::agent_gateway {

struct TokenUsage {
  int64_t input_tokens = 0;      // with cached
  int64_t output_tokens = 0;     // with reasoning
  int64_t reasoning_tokens = 0;
  int64_t cached_tokens = 0;
};

class StreamUsage {
 public:
  // An event larger than this is skipped (no provider sends one).
  static constexpr size_t kMaxEvent = 16 << 20;

  explicit StreamUsage(agents::Wire wire) : wire_(wire) {}

  void Feed(absl::string_view bytes);
  // A plain (not streamed) answer: its JSON body, whose usage is that of
  // the stream's final event (Gemini: an array of a stream's chunks too).
  void Answer(absl::string_view body);
  // What the events so far reported.
  const TokenUsage& usage() const { return usage_; }
  // The answer's final event arrived with its usage (the usage is whole).
  // An answer that never says so is charged its reservation
  // (model_proxy.h).
  bool finished() const { return finished_; }
  // Tokens towards a token budget: input (with cached) plus output (with
  // reasoning).
  int64_t total() const { return usage_.input_tokens + usage_.output_tokens; }

 private:
  void Event(absl::string_view event);
  void Data(const std::string& json);

  const agents::Wire wire_;
  std::string pending_;  // the bytes of the event not yet complete
  bool skipping_ = false;  // inside an event over kMaxEvent
  TokenUsage usage_;
  bool started_ = false;  // Anthropic: message_start carried a usage
  bool finished_ = false;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_STREAM_USAGE_H_
