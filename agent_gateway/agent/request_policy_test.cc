// The proxy's edits of an allowed request (request_policy.h): the model
// pinned, the answer capped to what its reservation holds, each edit said.
#include "agent_gateway/agent/request_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ptxbench::agent_gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;
using Json = StrictJson;

const RequestLimits kLimits{"gpt-5.6-sol", 4000};

TEST(RequestPolicy, ResponsesModelPinnedOutputCapped) {
  Json body = Json::parse(R"({"model": "gpt-4o-mini", "stream": true, "max_output_tokens": 128000,
                              "tools": [{"type": "function", "name": "exec_command"}]})");
  PolicyEdits edits = ApplyRequestPolicy(agents::Wire::kOpenAIResponses, kLimits, body);
  EXPECT_EQ(body["model"], "gpt-5.6-sol");
  EXPECT_EQ(body["max_output_tokens"], 4000);
  EXPECT_EQ(body["tools"].size(), 1u);
  EXPECT_THAT(edits, UnorderedElementsAre("model gpt-4o-mini -> gpt-5.6-sol",
                                          "max_output_tokens 128000 -> 4000"));
}

TEST(RequestPolicy, AnthropicThinkingStaysInsideTheCap) {
  Json body = Json::parse(R"({"model": "claude-sonnet-4-5", "max_tokens": 32000,
                              "thinking": {"type": "enabled", "budget_tokens": 31999}})");
  PolicyEdits edits =
      ApplyRequestPolicy(agents::Wire::kAnthropicMessages, {"claude-sonnet-4-5", 8192}, body);
  EXPECT_EQ(body["max_tokens"], 8192);
  EXPECT_EQ(body["thinking"]["budget_tokens"], 8191) << "below max_tokens, as the API requires";
  EXPECT_THAT(edits, ElementsAre("max_tokens 32000 -> 8192", "thinking.budget_tokens 31999 -> 8191"));
  // Too little left for the smallest budget the API takes: thinking is off.
  Json small = Json::parse(R"({"model": "m", "max_tokens": 32000,
                               "thinking": {"type": "enabled", "budget_tokens": 31999}})");
  ApplyRequestPolicy(agents::Wire::kAnthropicMessages, {"m", 500}, small);
  EXPECT_EQ(small["thinking"], Json({{"type", "disabled"}}));
}

TEST(RequestPolicy, GeminiOutputAndThinkingCapped) {
  Json body = Json::parse(R"({"contents": [], "generationConfig": {"temperature": 1,
                              "thinkingConfig": {"thinkingBudget": -1}}})");
  PolicyEdits edits = ApplyRequestPolicy(agents::Wire::kGeminiGenerate, {"gemini-2.5-pro", 1000}, body);
  EXPECT_EQ(body["generationConfig"]["maxOutputTokens"], 1000);
  EXPECT_EQ(body["generationConfig"]["thinkingConfig"]["thinkingBudget"], 1000);
  EXPECT_EQ(body["generationConfig"]["temperature"], 1);
  EXPECT_THAT(edits, ElementsAre("maxOutputTokens unset -> 1000", "thinkingBudget -1 -> 1000"));
  // A countTokens request that wraps a generate request gets the pinned model.
  Json count = Json::parse(R"({"generateContentRequest": {"model": "models/other", "contents": []}})");
  ApplyRequestPolicy(agents::Wire::kGeminiGenerate, {"gemini-2.5-pro", 0}, count);
  EXPECT_EQ(count["generateContentRequest"]["model"], "models/gemini-2.5-pro");
}

TEST(RequestPolicy, ARequestWithinThePolicyIsLeftAlone) {
  Json body = Json::parse(R"({"model": "gpt-5.6-sol", "max_output_tokens": 100,
                              "tools": [{"type": "function", "name": "f"}]})");
  const Json before = body;
  EXPECT_TRUE(ApplyRequestPolicy(agents::Wire::kOpenAIResponses, kLimits, body).empty());
  EXPECT_EQ(body, before);
  // A larger cap than asked is not raised; a missing one is set.
  Json uncapped = Json::parse(R"({"model": "gpt-5.6-sol"})");
  EXPECT_THAT(ApplyRequestPolicy(agents::Wire::kOpenAIResponses, kLimits, uncapped),
              ElementsAre("max_output_tokens unset -> 4000"));
  // A token counter's request has no answer to cap.
  Json count = Json::parse(R"({"model": "x", "messages": []})");
  EXPECT_THAT(ApplyRequestPolicy(agents::Wire::kAnthropicMessages, {"m", 0}, count),
              ElementsAre("model x -> m"));
  EXPECT_FALSE(count.contains("max_tokens"));
}

}  // namespace
}  // namespace ptxbench::agent_gateway
