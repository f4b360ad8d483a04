// The Anthropic and Gemini request/response shapes, against a real HTTP
// server on loopback that speaks them.
#include <gtest/gtest.h>

#include "agent_gateway/providers/anthropic_provider.h"
#include "agent_gateway/providers/gemini_provider.h"
#include "agent_gateway/providers/provider_test_util.h"
#include "agent_gateway/testing/fake_model_server.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;
using nlohmann::json;
using testing_support::CallAndWait;
using testing_support::FakeModelServer;

constexpr char kKey[] = "key-ag-5e6f7a8b";

v1::LlmRequest Conversation() {
  v1::LlmRequest r;
  for (auto [role, text] : {std::pair{"system", "You write kernels."},
                            std::pair{"user", "Write a GEMM."},
                            std::pair{"assistant", "```cuda\n// v0\n```"},
                            std::pair{"user", "Faster, please."}}) {
    auto* m = r.add_messages();
    m->set_role(role);
    m->set_content(text);
  }
  return r;
}

ModelConfig Config(const std::string& provider, const std::string& base_url) {
  ModelConfig c;
  c.name = "m";
  c.provider = provider;
  c.base_url = base_url;
  c.model_id = "model-x";
  c.params.set_max_tokens(16000);
  c.params.set_thinking_budget_tokens(4000);
  c.price = {3.0, 15.0, -1, 0.3};
  return c;
}

TEST(AnthropicProviderTest, MessagesWithThinkingUsageAndErrors) {
  FakeModelServer server;
  server.Answer([](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"type": "message", "role": "assistant",
      "content": [{"type": "thinking", "thinking": "Let me tile it."},
                  {"type": "text", "text": "```cuda\n// v1\n```"}],
      "stop_reason": "max_tokens",
      "usage": {"input_tokens": 100, "cache_read_input_tokens": 900, "output_tokens": 2000}})",
                    "application/json");
  });
  HttpClient http;
  HttpJsonProvider p(anthropic::kShape, Config("anthropic", server.root()), kKey, absl::Seconds(10), &http);
  CallOutcome out = CallAndWait(p, {Conversation(), 0, nullptr});
  ASSERT_TRUE(out.response.has_value()) << out.message;
  EXPECT_EQ(out.response->text(), "```cuda\n// v1\n```");
  EXPECT_EQ(out.response->reasoning(), "Let me tile it.");
  EXPECT_EQ(out.response->finish_reason(), "length") << "truncated answers are recorded as such";
  EXPECT_EQ(out.response->provider(), "anthropic");
  EXPECT_EQ(out.response->usage().input_tokens(), 1000);
  EXPECT_EQ(out.response->usage().cached_tokens(), 900);
  EXPECT_NEAR(out.response->cost_usd(), (100 * 3.0 + 900 * 0.3 + 2000 * 15.0) / 1e6, 1e-12);

  httplib::Request sent = server.LastRequest();
  EXPECT_EQ(sent.path, "/v1/messages");
  EXPECT_EQ(sent.get_header_value("x-api-key"), kKey);
  EXPECT_EQ(sent.get_header_value("anthropic-version"), "2023-06-01");
  json body = json::parse(sent.body);
  EXPECT_EQ(body["system"], "You write kernels.");
  ASSERT_EQ(body["messages"].size(), 3u) << "the system prompt is not a message";
  EXPECT_EQ(body["messages"][1]["role"], "assistant");
  EXPECT_EQ(body["thinking"]["budget_tokens"], 4000);
  EXPECT_EQ(body["max_tokens"], 16000);

  server.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 529;
    res.set_content(R"({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})",
                    "application/json");
  });
  CallOutcome overloaded = CallAndWait(p, {Conversation(), 0, nullptr});
  EXPECT_EQ(overloaded.failure, v1::MODEL_API);
  server.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content(R"({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}})",
                    "application/json");
  });
  CallOutcome too_long = CallAndWait(p, {Conversation(), 0, nullptr});
  EXPECT_EQ(too_long.failure, v1::TERMINAL);
  EXPECT_NE(too_long.message.find("context window exceeded"), std::string::npos);
}

TEST(GeminiProviderTest, GenerateContentWithThoughtsUsageAndErrors) {
  FakeModelServer server;
  server.Answer([](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Thinking about tiles.", "thought": true},
        {"text": "```cuda\n// v1\n```"}]}, "finishReason": "STOP"}],
      "usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 300,
                        "thoughtsTokenCount": 700, "cachedContentTokenCount": 0}})",
                    "application/json");
  });
  HttpClient http;
  HttpJsonProvider p(gemini::kShape, Config("gemini", server.root() + "/v1beta"), kKey, absl::Seconds(10), &http);
  CallOutcome out = CallAndWait(p, {Conversation(), 0, nullptr});
  ASSERT_TRUE(out.response.has_value()) << out.message;
  EXPECT_EQ(out.response->text(), "```cuda\n// v1\n```");
  EXPECT_EQ(out.response->reasoning(), "Thinking about tiles.");
  EXPECT_EQ(out.response->finish_reason(), "stop");
  EXPECT_EQ(out.response->usage().output_tokens(), 1000) << "thoughts are billed as output";
  EXPECT_EQ(out.response->usage().reasoning_tokens(), 700);
  EXPECT_NEAR(out.response->cost_usd(), (1000 * 3.0 + 1000 * 15.0) / 1e6, 1e-12);

  httplib::Request sent = server.LastRequest();
  EXPECT_EQ(sent.path, "/v1beta/models/model-x:generateContent");
  EXPECT_EQ(sent.get_header_value("x-goog-api-key"), kKey);
  EXPECT_EQ(sent.path.find(kKey), std::string::npos) << "the key is never in the URL";
  json body = json::parse(sent.body);
  EXPECT_EQ(body["systemInstruction"]["parts"][0]["text"], "You write kernels.");
  ASSERT_EQ(body["contents"].size(), 3u);
  EXPECT_EQ(body["contents"][1]["role"], "model");
  EXPECT_EQ(body["generationConfig"]["thinkingConfig"]["thinkingBudget"], 4000);
  EXPECT_EQ(body["generationConfig"]["maxOutputTokens"], 16000);

  server.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 429;
    res.set_header("Retry-After", "3");
    res.set_content(R"({"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}})",
                    "application/json");
  });
  CallOutcome limited = CallAndWait(p, {Conversation(), 0, nullptr});
  EXPECT_EQ(limited.failure, v1::MODEL_API);
  EXPECT_EQ(limited.retry_after_ms, 3000);
  server.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 403;
    res.set_content(R"({"error": {"code": 403, "message": "API key not valid", "status": "PERMISSION_DENIED"}})",
                    "application/json");
  });
  CallOutcome denied = CallAndWait(p, {Conversation(), 0, nullptr});
  EXPECT_EQ(denied.failure, v1::TERMINAL);
  EXPECT_NE(denied.message.find("authentication failed"), std::string::npos);
  // Gemini's usual shapes: the delay in the body, a bad key as a 400.
  server.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 429;
    res.set_content(R"({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Quota",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]}})",
                    "application/json");
  });
  EXPECT_EQ(CallAndWait(p, {Conversation(), 0, nullptr}).retry_after_ms, 7000);
  server.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content(R"({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT", "details": [{"reason": "API_KEY_INVALID"}]}})",
                    "application/json");
  });
  CallOutcome bad_key = CallAndWait(p, {Conversation(), 0, nullptr});
  EXPECT_EQ(bad_key.failure, v1::TERMINAL);
  EXPECT_NE(bad_key.message.find("authentication failed"), std::string::npos) << bad_key.message;
  // A blocked prompt is an answer without text, said why.
  auto blocked = gemini::ParseResponse(R"({"promptFeedback": {"blockReason": "SAFETY"}})");
  ASSERT_TRUE(blocked.ok());
  EXPECT_EQ(blocked->finish_reason(), "content_filter: SAFETY");
}

}  // namespace
}  // namespace ptxbench::agent_gateway
