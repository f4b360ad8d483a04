#include "agent_gateway/agent/stream_usage.h"

#include <gtest/gtest.h>

#include <string>

#include "agent_gateway/models/model_registry.h"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;

// Feeds `stream` one byte at a time, then in one piece: both must agree.
StreamUsage Read(agents::Wire wire, const std::string& stream) {
  StreamUsage bytewise(wire), whole(wire);
  for (char c : stream) bytewise.Feed(absl::string_view(&c, 1));
  whole.Feed(stream);
  EXPECT_EQ(bytewise.usage().input_tokens, whole.usage().input_tokens);
  EXPECT_EQ(bytewise.usage().output_tokens, whole.usage().output_tokens);
  EXPECT_EQ(bytewise.usage().reasoning_tokens, whole.usage().reasoning_tokens);
  EXPECT_EQ(bytewise.usage().cached_tokens, whole.usage().cached_tokens);
  EXPECT_EQ(bytewise.finished(), whole.finished());
  return whole;
}

TEST(StreamUsage, ResponsesCompletedCarriesTheUsage) {
  const std::string stream =
      "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n"
      "event: response.output_item.done\r\ndata: {\"type\":\"response.output_item.done\"}\r\n\r\n"
      "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":"
      "{\"input_tokens\":1200,\"input_tokens_details\":{\"cached_tokens\":1000},"
      "\"output_tokens\":300,\"output_tokens_details\":{\"reasoning_tokens\":250},"
      "\"total_tokens\":1500}}}\n\n";
  StreamUsage u = Read(agents::Wire::kOpenAIResponses, stream);
  EXPECT_TRUE(u.finished());
  EXPECT_EQ(u.usage().input_tokens, 1200);
  EXPECT_EQ(u.usage().cached_tokens, 1000);
  EXPECT_EQ(u.usage().output_tokens, 300);
  EXPECT_EQ(u.usage().reasoning_tokens, 250);
  EXPECT_EQ(u.total(), 1500);
  // Priced by the registry's rule: cached input and reasoning at their rates.
  ModelPrice price{2.0, 10.0, 20.0, 0.5};
  v1::Usage usage;
  usage.set_input_tokens(u.usage().input_tokens);
  usage.set_cached_tokens(u.usage().cached_tokens);
  usage.set_output_tokens(u.usage().output_tokens);
  usage.set_reasoning_tokens(u.usage().reasoning_tokens);
  EXPECT_DOUBLE_EQ(CostUsd(price, usage),
                   (200 * 2.0 + 1000 * 0.5 + 50 * 10.0 + 250 * 20.0) / 1e6);
}

TEST(StreamUsage, AnthropicStartAndLastDelta) {
  const std::string stream =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"
      "{\"input_tokens\":50,\"cache_read_input_tokens\":900,\"cache_creation_input_tokens\":100,"
      "\"output_tokens\":1}}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\"}\n\n"
      "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":40}}\n\n"
      "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":75}}\n\n";
  StreamUsage u = Read(agents::Wire::kAnthropicMessages, stream);
  EXPECT_FALSE(u.finished());  // no message_stop yet
  EXPECT_EQ(u.usage().input_tokens, 1050);
  EXPECT_EQ(u.usage().cached_tokens, 900);
  EXPECT_EQ(u.usage().output_tokens, 75);
  u.Feed("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  EXPECT_TRUE(u.finished());
  EXPECT_EQ(u.total(), 1125);
}

TEST(StreamUsage, GeminiLastUsageMetadataWithThoughts) {
  const std::string stream =
      "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}],"
      "\"usageMetadata\":{\"promptTokenCount\":400,\"candidatesTokenCount\":2}}\n\n"
      "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"b\"}]},\"finishReason\":\"STOP\"}],"
      "\"usageMetadata\":{\"promptTokenCount\":400,\"cachedContentTokenCount\":300,"
      "\"candidatesTokenCount\":30,\"thoughtsTokenCount\":70,\"totalTokenCount\":500}}\n\n";
  StreamUsage u = Read(agents::Wire::kGeminiGenerate, stream);
  EXPECT_TRUE(u.finished());
  EXPECT_EQ(u.usage().input_tokens, 400);
  EXPECT_EQ(u.usage().cached_tokens, 300);
  EXPECT_EQ(u.usage().output_tokens, 100);
  EXPECT_EQ(u.usage().reasoning_tokens, 70);
  EXPECT_EQ(u.total(), 500);
}

// Found by fuzz/model_proxy_fuzz: an event whose type is not a string threw
// out of the parser (and would have ended the gateway).
TEST(StreamUsage, AnEventWhoseTypeIsNotAStringIsSkipped) {
  StreamUsage u = Read(agents::Wire::kAnthropicMessages,
                       "data: {\"type\":8e9}\n\ndata: {\"type\":[1]}\n\n");
  EXPECT_EQ(u.total(), 0);
  EXPECT_FALSE(u.finished());
}

TEST(StreamUsage, GarbageAndAHugeEventCountNothing) {
  StreamUsage u(agents::Wire::kOpenAIResponses);
  u.Feed("data: {not json\n\n: a comment\n\ndata: [1,2]\n\n");
  u.Feed("data: " + std::string(StreamUsage::kMaxEvent + 10, 'x'));
  u.Feed("\n\n");
  EXPECT_FALSE(u.finished());
  EXPECT_EQ(u.total(), 0);
  // The stream goes on after the skipped event.
  u.Feed("data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":3,"
         "\"output_tokens\":4}}}\n\n");
  EXPECT_TRUE(u.finished());
  EXPECT_EQ(u.total(), 7);
}

// A plain answer (a request without "stream") carries the final usage in
// its body.
TEST(StreamUsage, PlainAnswersOfEachApi) {
  StreamUsage responses(agents::Wire::kOpenAIResponses);
  responses.Answer(R"({"object":"response","usage":{"input_tokens":10,"output_tokens":5,)"
                   R"("output_tokens_details":{"reasoning_tokens":2}}})");
  EXPECT_EQ(responses.total(), 15);
  EXPECT_EQ(responses.usage().reasoning_tokens, 2);
  StreamUsage anthropic(agents::Wire::kAnthropicMessages);
  anthropic.Answer(R"({"type":"message","usage":{"input_tokens":7,)"
                   R"("cache_read_input_tokens":3,"output_tokens":9}})");
  EXPECT_TRUE(anthropic.finished());
  EXPECT_EQ(anthropic.usage().input_tokens, 10);
  EXPECT_EQ(anthropic.usage().output_tokens, 9);
  StreamUsage gemini(agents::Wire::kGeminiGenerate);
  gemini.Answer(R"({"candidates":[{"finishReason":"STOP"}],"usageMetadata":)"
                R"({"promptTokenCount":4,"candidatesTokenCount":6}})");
  EXPECT_EQ(gemini.total(), 10);
  StreamUsage garbage(agents::Wire::kGeminiGenerate);
  garbage.Answer("not json");
  EXPECT_EQ(garbage.total(), 0);
  EXPECT_FALSE(garbage.finished()) << "an answer that says no usage is charged its reservation";
}

// Gemini's streamGenerateContent without alt=sse answers one JSON array of
// the chunks a stream carries: the last usage counts, and the answer is whole
// once a candidate has finished. An answer with no usage is never whole.
TEST(StreamUsage, GeminiArraysAndAnswersWithoutUsage) {
  StreamUsage array(agents::Wire::kGeminiGenerate);
  array.Answer(R"([{"candidates":[{"content":{}}],"usageMetadata":{"promptTokenCount":4}},)"
               R"({"candidates":[{"finishReason":"STOP"}],"usageMetadata":)"
               R"({"promptTokenCount":4,"candidatesTokenCount":600}}])");
  EXPECT_EQ(array.total(), 604);
  EXPECT_TRUE(array.finished());
  StreamUsage cut(agents::Wire::kGeminiGenerate);
  cut.Answer(R"([{"candidates":[{"content":{}}],"usageMetadata":{"promptTokenCount":4}}])");
  EXPECT_FALSE(cut.finished());
  StreamUsage responses(agents::Wire::kOpenAIResponses);
  responses.Feed("data: {\"type\":\"response.completed\",\"response\":{}}\n\n");
  EXPECT_FALSE(responses.finished()) << "completed without a usage";
  StreamUsage anthropic(agents::Wire::kAnthropicMessages);
  anthropic.Feed("data: {\"type\":\"message_stop\"}\n\n");
  EXPECT_FALSE(anthropic.finished()) << "a stop without a start that carried usage";
}

}  // namespace
}  // namespace ptxbench::agent_gateway
