// The OpenAI-compatible provider against a real HTTP server on loopback
// (cpp-httplib) that answers the way OpenAI does, errors included.
#include "agent_gateway/providers/openai_provider.h"

#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <thread>

#include "agent_gateway/providers/provider_test_util.h"
#include "agent_gateway/testing/fake_model_server.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;
using nlohmann::json;
using testing_support::CallAndWait;
using testing_support::Completion;
using testing_support::FakeModelServer;

constexpr char kKey[] = "sk-test-4f8a9c0d2e1b";

class OpenAiProviderTest : public ::testing::Test {
 protected:
  ModelConfig Config() {
    ModelConfig c;
    c.name = "m";
    c.provider = "openai";
    c.base_url = server_.base_url();
    c.model_id = "served-model-1";
    c.params.set_max_tokens(4096);
    c.params.set_temperature(0.5);
    c.price = {2.0, 8.0, -1, 0.5};
    return c;
  }
  CallOutcome Call(absl::Duration timeout = absl::Seconds(10)) {
    HttpJsonProvider p(openai::kShape, Config(), kKey, timeout, &http_);
    v1::LlmRequest r;
    r.set_model("m");
    auto* s = r.add_messages();
    s->set_role("system");
    s->set_content("You write kernels.");
    auto* u = r.add_messages();
    u->set_role("user");
    u->set_content("Write a GEMM.");
    return CallAndWait(p, {r, 0, nullptr});
  }
  FakeModelServer server_;
  HttpClient http_;
};

TEST_F(OpenAiProviderTest, AnswerWithUsageCostAndReasoning) {
  server_.Answer([](const httplib::Request&, httplib::Response& res) {
    res.set_content(Completion("```cuda\n// kernel\n```", "stop"), "application/json");
  });
  CallOutcome out = Call();
  ASSERT_TRUE(out.response.has_value()) << out.message;
  EXPECT_EQ(out.response->text(), "```cuda\n// kernel\n```");
  EXPECT_EQ(out.response->reasoning(), "thinking...");
  EXPECT_EQ(out.response->finish_reason(), "stop");
  EXPECT_EQ(out.response->provider(), "openai");
  EXPECT_FALSE(out.response->simulated());
  EXPECT_EQ(out.response->usage().input_tokens(), 1000);
  EXPECT_EQ(out.response->usage().cached_tokens(), 200);
  EXPECT_EQ(out.response->usage().reasoning_tokens(), 100);
  // 800 input at $2 + 200 cached at $0.5 + 500 output at $8, per million.
  EXPECT_NEAR(out.response->cost_usd(), (800 * 2.0 + 200 * 0.5 + 500 * 8.0) / 1e6, 1e-12);

  httplib::Request sent = server_.LastRequest();
  EXPECT_EQ(sent.get_header_value("Authorization"), std::string("Bearer ") + kKey);
  json body = json::parse(sent.body);
  EXPECT_EQ(body["model"], "served-model-1");
  EXPECT_EQ(body["max_tokens"], 4096) << "compatible servers take max_tokens";
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.5);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][1]["content"], "Write a GEMM.");
}

TEST_F(OpenAiProviderTest, TruncatedAnswerIsRecordedAsSuch) {
  server_.Answer([](const httplib::Request&, httplib::Response& res) {
    res.set_content(Completion("```cuda\n// half a ker", "length"), "application/json");
  });
  CallOutcome out = Call();
  ASSERT_TRUE(out.response.has_value());
  EXPECT_EQ(out.response->finish_reason(), "length");
}

TEST_F(OpenAiProviderTest, RateLimitIsRetryableAfterRetryAfter) {
  server_.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 429;
    res.set_header("Retry-After", "2");
    res.set_content(R"({"error": {"message": "Rate limit reached", "type": "requests"}})",
                    "application/json");
  });
  CallOutcome out = Call();
  EXPECT_FALSE(out.response.has_value());
  EXPECT_EQ(out.failure, v1::MODEL_API);
  EXPECT_EQ(out.retry_after_ms, 2000);
  EXPECT_NE(out.message.find("Rate limit reached"), std::string::npos);
  server_.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 429;
    res.set_header("Retry-After", "2");
    res.set_header("retry-after-ms", "1250");  // OpenAI's precise form wins
    res.set_content(R"({"error": {"message": "Rate limit reached"}})", "application/json");
  });
  EXPECT_EQ(Call().retry_after_ms, 1250);
}

TEST_F(OpenAiProviderTest, ServerErrorIsRetryable) {
  server_.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content("upstream exploded", "text/plain");
  });
  CallOutcome out = Call();
  EXPECT_EQ(out.failure, v1::MODEL_API);
  EXPECT_EQ(out.retry_after_ms, 0);
}

TEST_F(OpenAiProviderTest, AuthErrorIsTerminalAndNeverShowsTheKey) {
  server_.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 401;
    res.set_content(std::string(R"({"error": {"message": "Incorrect API key provided: )") + kKey +
                        R"("}})",
                    "application/json");
  });
  CallOutcome out = Call();
  EXPECT_EQ(out.failure, v1::TERMINAL);
  EXPECT_NE(out.message.find("authentication failed"), std::string::npos) << out.message;
  EXPECT_EQ(out.message.find(kKey), std::string::npos) << out.message;
}

TEST_F(OpenAiProviderTest, ContextWindowErrorIsTerminal) {
  server_.Answer([](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content(
        R"({"error": {"message": "This model's maximum context length is 128000 tokens.", "code": "context_length_exceeded"}})",
        "application/json");
  });
  CallOutcome out = Call();
  EXPECT_EQ(out.failure, v1::TERMINAL);
  EXPECT_NE(out.message.find("context window exceeded"), std::string::npos) << out.message;
}

TEST_F(OpenAiProviderTest, TimeoutAndRefusedConnectionAreRetryable) {
  server_.Answer([](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    res.set_content(Completion("late", "stop"), "application/json");
  });
  CallOutcome slow = Call(absl::Milliseconds(200));
  EXPECT_EQ(slow.failure, v1::MODEL_API);
  EXPECT_NE(slow.message.find("timed out"), std::string::npos) << slow.message;
  server_.Stop();
  CallOutcome refused = Call();
  EXPECT_EQ(refused.failure, v1::MODEL_API);
}

TEST(OpenAiRequestTest, OpenAiItselfGetsMaxCompletionTokensAndReasoningEffort) {
  ModelConfig c;
  c.base_url = "https://api.openai.com/v1";
  c.model_id = "o3";
  c.params.set_max_tokens(1000);
  c.params.set_reasoning_effort("high");
  v1::LlmRequest r;
  json body = json::parse(openai::RequestBody(c, r));
  EXPECT_EQ(body["max_completion_tokens"], 1000);
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_EQ(body["reasoning_effort"], "high");
  EXPECT_FALSE(body.contains("temperature")) << "unset parameters are the provider's defaults";
  EXPECT_FALSE(openai::ParseResponse(R"({"choices": []})").ok());
}

}  // namespace
}  // namespace ptxbench::agent_gateway
