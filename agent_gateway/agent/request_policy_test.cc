#include "agent_gateway/agent/request_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ptxbench::agent_gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;
using Json = nlohmann::json;

const RequestLimits kLimits{"gpt-5.6-sol", 4000};

TEST(RequestPolicy, ResponsesModelPinnedServerToolsGoneOutputCapped) {
  // The shape Codex sends, with the server-side tools an agent could switch
  // on by starting a second CLI with web search "live".
  Json body = Json::parse(R"({
    "model": "gpt-4o-mini", "stream": true, "max_output_tokens": 128000,
    "tools": [{"type": "function", "name": "exec_command", "parameters": {}},
              {"type": "web_search"}, {"type": "web_search_preview_2025_03_11"},
              {"type": "file_search", "vector_store_ids": ["vs_1"]},
              {"type": "code_interpreter"}, {"type": "image_generation"},
              {"type": "mcp", "server_url": "https://example.invalid"},
              {"type": "custom", "name": "apply_patch"}, {"type": "local_shell"}]})");
  std::string path = "/v1/responses";
  PolicyEdits edits = ApplyRequestPolicy(agents::Wire::kOpenAIResponses, kLimits, body, path);
  EXPECT_EQ(body["model"], "gpt-5.6-sol");
  EXPECT_EQ(body["max_output_tokens"], 4000);
  std::vector<std::string> kept;
  for (const Json& t : body["tools"]) kept.push_back(t["type"]);
  EXPECT_THAT(kept, ElementsAre("function", "custom", "local_shell"));
  EXPECT_THAT(edits, UnorderedElementsAre(
                         "model gpt-4o-mini -> gpt-5.6-sol", "removed tool web_search",
                         "removed tool web_search_preview_2025_03_11", "removed tool file_search",
                         "removed tool code_interpreter", "removed tool image_generation",
                         "removed tool mcp", "max_output_tokens 128000 -> 4000"));
}

TEST(RequestPolicy, AnthropicModelPinnedServerToolsAndConnectorGone) {
  Json body = Json::parse(R"({
    "model": "claude-haiku-4-5", "max_tokens": 32000, "stream": true,
    "mcp_servers": [{"type": "url", "url": "https://example.invalid/sse"}],
    "tools": [{"name": "Bash", "input_schema": {}},
              {"type": "web_search_20250305", "name": "web_search"},
              {"type": "web_fetch_20250910", "name": "web_fetch"},
              {"type": "code_execution_20250825", "name": "code_execution"}]})");
  std::string path = "/v1/messages?beta=true";
  const RequestLimits limits{"claude-sonnet-4-5", 8192};
  PolicyEdits edits = ApplyRequestPolicy(agents::Wire::kAnthropicMessages, limits, body, path);
  EXPECT_EQ(body["model"], "claude-sonnet-4-5");
  EXPECT_EQ(body["max_tokens"], 8192);
  ASSERT_EQ(body["tools"].size(), 1u);
  EXPECT_EQ(body["tools"][0]["name"], "Bash");
  EXPECT_FALSE(body.contains("mcp_servers"));
  EXPECT_EQ(edits.size(), 6u);
  EXPECT_EQ(path, "/v1/messages?beta=true");
}

TEST(RequestPolicy, GeminiModelInThePathAndToolKeysInsideEntries) {
  Json body = Json::parse(R"({
    "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    "tools": [{"functionDeclarations": [{"name": "write_file"}]},
              {"googleSearch": {}}, {"urlContext": {}, "codeExecution": {}}],
    "generationConfig": {"temperature": 1}})");
  std::string path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
  const RequestLimits limits{"gemini-2.5-pro", 1000};
  PolicyEdits edits = ApplyRequestPolicy(agents::Wire::kGeminiGenerate, limits, body, path);
  EXPECT_EQ(path, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
  ASSERT_EQ(body["tools"].size(), 1u);
  EXPECT_TRUE(body["tools"][0].contains("functionDeclarations"));
  EXPECT_EQ(body["generationConfig"]["maxOutputTokens"], 1000);
  EXPECT_EQ(body["generationConfig"]["temperature"], 1);
  EXPECT_THAT(edits, UnorderedElementsAre("model gemini-2.5-flash -> gemini-2.5-pro",
                                          "removed tool googleSearch", "removed tool urlContext",
                                          "removed tool codeExecution",
                                          "maxOutputTokens unset -> 1000"));
}

TEST(RequestPolicy, ARequestWithinThePolicyIsLeftAlone) {
  Json body = Json::parse(R"({"model": "gpt-5.6-sol", "max_output_tokens": 100,
                              "tools": [{"type": "function", "name": "f"}]})");
  const Json before = body;
  std::string path = "/v1/responses";
  EXPECT_TRUE(ApplyRequestPolicy(agents::Wire::kOpenAIResponses, kLimits, body, path).empty());
  EXPECT_EQ(body, before);
  // A larger cap than asked is not raised; a missing one is set.
  Json uncapped = Json::parse(R"({"model": "gpt-5.6-sol"})");
  EXPECT_THAT(ApplyRequestPolicy(agents::Wire::kOpenAIResponses, kLimits, uncapped, path),
              ElementsAre("max_output_tokens unset -> 4000"));
}

}  // namespace
}  // namespace ptxbench::agent_gateway
