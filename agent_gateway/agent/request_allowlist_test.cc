// The allow-lists of request bodies (request_allowlist.h): the shapes the
// pinned CLIs send pass; each way past a strip list, each type confusion and
// each door to the provider's own services is refused by name.
#include "agent_gateway/agent/request_allowlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace ptxbench::agent_gateway {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
constexpr auto kAnthropic = agents::Wire::kAnthropicMessages;
constexpr auto kResponses = agents::Wire::kOpenAIResponses;
constexpr auto kGemini = agents::Wire::kGeminiGenerate;

// The shapes the pinned CLIs send (keys and types as captured from Claude
// Code 2.1.332, Codex 0.171.0 and Gemini CLI 0.61.0; texts shortened).
Json ClaudeCodeBody() {
  return Json::parse(R"({
    "model": "claude-sonnet-4-5",
    "messages": [
      {"role": "user", "content": [{"type": "text", "text": "hi",
                                     "cache_control": {"type": "ephemeral"}}]},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "...", "signature": "s"},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [
          {"type": "text", "text": "kernel.cu"},
          {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
          {"type": "tool_reference", "tool_name": "mcp__ptxbench__evaluate_kernel"}]}]}],
    "system": [{"type": "text", "text": "You are Claude Code", "cache_control": {"type": "ephemeral"}}],
    "tools": [{"name": "Bash", "description": "d", "input_schema": {"type": "object"}},
              {"name": "ToolSearch", "description": "d", "input_schema": {}, "defer_loading": false}],
    "metadata": {"user_id": "u"},
    "max_tokens": 32000,
    "thinking": {"budget_tokens": 31999, "type": "enabled", "display": "updates"},
    "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
    "stream": true})");
}

Json CodexBody() {
  return Json::parse(R"({
    "model": "gpt-5", "stream": true,
    "input": [
      {"type": "additional_tools", "id": "at_1", "role": "developer", "tools": [
        {"type": "namespace", "name": "functions", "description": "", "tools": [
          {"type": "custom", "name": "exec", "description": "d"}]}]},
      {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "x"}]},
      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "y"}]},
      {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"},
      {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"},
      {"type": "function_call_output", "call_id": "c1", "output": "ok"}],
    "tools": [{"type": "function", "name": "exec_command", "description": "d", "strict": false,
               "parameters": {}},
              {"type": "namespace", "name": "multi_agent_v1", "description": "d",
               "tools": [{"type": "function", "name": "spawn", "description": "d", "strict": false,
                          "parameters": {}}]}],
    "tool_choice": "auto", "parallel_tool_calls": false,
    "reasoning": {"summary": "auto"}, "store": false,
    "include": ["reasoning.encrypted_content"], "prompt_cache_key": "k",
    "client_metadata": {"thread_id": "t"}})");
}

Json GeminiBody() {
  return Json::parse(R"({
    "contents": [
      {"role": "user", "parts": [{"text": "hi"}]},
      {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}}},
                                  {"thoughtSignature": "s", "text": "t", "thought": true}]},
      {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
                                                        "response": {"output": "ok"}}}]}],
    "systemInstruction": {"parts": [{"text": "You are Gemini CLI"}], "role": "user"},
    "tools": [{"functionDeclarations": [{"name": "run_shell_command", "description": "d"}]}],
    "generationConfig": {"temperature": 0, "topP": 0.95, "topK": 64,
                         "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}}})");
}

absl::Status Check(agents::Wire wire, const Json& body, RouteKind kind = RouteKind::kModelCall) {
  return CheckRequestBody(wire, kind, body.dump()).status();
}

TEST(RequestAllowlist, TheShapesThePinnedClisSendPass) {
  absl::StatusOr<CheckedRequest> claude =
      CheckRequestBody(kAnthropic, RouteKind::kModelCall, ClaudeCodeBody().dump());
  ASSERT_TRUE(claude.ok()) << claude.status();
  EXPECT_EQ(claude->requested_model, "claude-sonnet-4-5");
  EXPECT_EQ(claude->requested_max_output, 32000);
  EXPECT_EQ(claude->media_parts, 1);
  absl::StatusOr<CheckedRequest> codex =
      CheckRequestBody(kResponses, RouteKind::kModelCall, CodexBody().dump());
  ASSERT_TRUE(codex.ok()) << codex.status();
  EXPECT_EQ(codex->requested_max_output, 0) << "none asked";
  absl::StatusOr<CheckedRequest> gemini =
      CheckRequestBody(kGemini, RouteKind::kModelCall, GeminiBody().dump());
  ASSERT_TRUE(gemini.ok()) << gemini.status();
  // Token counters: Anthropic's without max_tokens, Gemini's both ways.
  Json count = ClaudeCodeBody();
  count.erase("max_tokens");
  EXPECT_TRUE(Check(kAnthropic, count, RouteKind::kTokenCount).ok());
  EXPECT_EQ(Check(kAnthropic, count).code(), absl::StatusCode::kInvalidArgument)
      << "a model call names its output limit";
  EXPECT_TRUE(Check(kGemini, {{"contents", GeminiBody()["contents"]}}, RouteKind::kTokenCount).ok());
  Json wrapped = GeminiBody();
  wrapped["model"] = "models/x";
  EXPECT_TRUE(Check(kGemini, {{"generateContentRequest", wrapped}}, RouteKind::kTokenCount).ok());
}

// The body, edited by `edit`, and what its refusal must name.
struct Refusal {
  const char* name;
  agents::Wire wire;
  std::function<void(Json&)> edit;
  const char* why;
};

TEST(RequestAllowlist, EachWayPastTheListIsRefusedByName) {
  const Refusal cases[] = {
      // Type confusions that threw out of the old policy and ended the gateway.
      {"model 0", kAnthropic, [](Json& b) { b["model"] = 0; }, "$.model must be a string"},
      {"tool type 7", kAnthropic, [](Json& b) { b["tools"] = {{{"type", 7}}}; }, "tools[0]"},
      {"tools as an object", kAnthropic, [](Json& b) { b["tools"] = {{"type", "x"}}; },
       "$.tools must be an array"},
      {"max_tokens as a string", kAnthropic, [](Json& b) { b["max_tokens"] = "9"; },
       "max_tokens must be an integer"},
      {"max_tokens as a float", kAnthropic, [](Json& b) { b["max_tokens"] = 9.5; },
       "max_tokens must be an integer"},
      {"messages as a string", kAnthropic, [](Json& b) { b["messages"] = "x"; },
       "messages must be an array"},
      {"a role of its own", kAnthropic, [](Json& b) { b["messages"][0]["role"] = "tool"; },
       "role"},
      {"Responses model 0", kResponses, [](Json& b) { b["model"] = 0; }, "$.model"},
      // Server tools, however written.
      {"web search", kAnthropic,
       [](Json& b) { b["tools"].push_back({{"type", "web_search_20250305"}, {"name", "w"}}); },
       "runs at the provider"},
      {"upper-case web search", kAnthropic,
       [](Json& b) { b["tools"].push_back({{"type", "WEB_SEARCH_20250305"}, {"name", "w"}}); },
       "runs at the provider"},
      {"padded web search", kAnthropic,
       [](Json& b) { b["tools"].push_back({{"type", " web_search_20250305"}, {"name", "w"}}); },
       "runs at the provider"},
      {"web fetch", kAnthropic,
       [](Json& b) { b["tools"].push_back({{"type", "web_fetch_20250910"}, {"name", "w"}}); },
       "runs at the provider"},
      {"code execution", kAnthropic,
       [](Json& b) { b["tools"].push_back({{"type", "code_execution_20250825"}, {"name", "c"}}); },
       "runs at the provider"},
      {"an unknown tool type", kAnthropic,
       [](Json& b) { b["tools"].push_back({{"type", "whatever_2030"}, {"name", "c"}}); },
       "not one ptxbench allows"},
      {"a custom tool with a URL", kAnthropic,
       [](Json& b) { b["tools"].push_back({{"name", "c"}, {"url", "https://x"}}); },
       "not accepted"},
      {"the MCP connector", kAnthropic,
       [](Json& b) { b["mcp_servers"] = {{{"type", "url"}, {"url", "https://x"}}}; },
       "$.mcp_servers is not accepted"},
      {"a container", kAnthropic, [](Json& b) { b["container"] = "c"; }, "$.container"},
      {"a priced tier", kAnthropic, [](Json& b) { b["service_tier"] = "priority"; },
       "service_tier"},
      {"a fast mode", kAnthropic, [](Json& b) { b["speed"] = "fast"; }, "$.speed"},
      {"an hour's cache", kAnthropic,
       [](Json& b) { b["system"][0]["cache_control"]["ttl"] = "1h"; }, "default cache"},
      {"an hour's cache on a message", kAnthropic,
       [](Json& b) { b["messages"][0]["content"][0]["cache_control"]["ttl"] = "1h"; },
       "default cache"},
      {"an image by URL", kAnthropic,
       [](Json& b) {
         b["messages"][0]["content"].push_back(
             {{"type", "image"}, {"source", {{"type", "url"}, {"url", "https://evil/x.png"}}}});
       },
       "fetched by the provider"},
      {"a document by file id", kAnthropic,
       [](Json& b) {
         b["messages"][0]["content"].push_back(
             {{"type", "document"}, {"source", {{"type", "file"}, {"file_id", "file_1"}}}});
       },
       "fetched by the provider"},
      {"a server tool's result", kAnthropic,
       [](Json& b) {
         b["messages"][1]["content"].push_back({{"type", "web_search_tool_result"}});
       },
       "not a content block"},
      {"Responses web search", kResponses,
       [](Json& b) { b["tools"].push_back({{"type", "web_search_preview"}}); },
       "runs at the provider"},
      {"Responses file search", kResponses,
       [](Json& b) { b["tools"].push_back({{"type", "file_search"}}); }, "runs at the provider"},
      {"Responses remote MCP", kResponses,
       [](Json& b) { b["tools"].push_back({{"type", "mcp"}, {"server_url", "https://x"}}); },
       "runs at the provider"},
      {"Responses code interpreter", kResponses,
       [](Json& b) { b["tools"].push_back({{"type", "code_interpreter"}}); },
       "runs at the provider"},
      {"a server tool among the conversation's tools", kResponses,
       [](Json& b) {
         b["input"].push_back({{"type", "additional_tools"},
                               {"role", "developer"},
                               {"tools", {{{"type", "function"}, {"name", "f"}},
                                          {{"type", "web_search"}}}}});
       },
       "runs at the provider"},
      {"a server tool in a namespace", kResponses,
       [](Json& b) { b["tools"][1]["tools"].push_back({{"type", "web_search"}}); },
       "runs at the provider"},
      {"a stored response", kResponses, [](Json& b) { b["store"] = true; }, "$.store must be false"},
      {"a previous response", kResponses, [](Json& b) { b["previous_response_id"] = "resp_1"; },
       "previous_response_id"},
      {"a background run", kResponses, [](Json& b) { b["background"] = true; }, "background"},
      {"a conversation", kResponses, [](Json& b) { b["conversation"] = "c"; }, "conversation"},
      {"an item by reference", kResponses,
       [](Json& b) { b["input"].push_back({{"type", "item_reference"}, {"id", "i"}}); },
       "not an input item"},
      {"an image by URL", kResponses,
       [](Json& b) {
         b["input"][2]["content"].push_back(
             {{"type", "input_image"}, {"image_url", "https://evil/x.png"}});
       },
       "which the provider fetches"},
      {"a file by id", kResponses,
       [](Json& b) {
         b["input"][2]["content"].push_back({{"type", "input_file"}, {"file_id", "f"}});
       },
       "which the provider fetches"},
      {"search results included", kResponses,
       [](Json& b) { b["include"].push_back("file_search_call.results"); }, "include[1]"},
      // Gemini's tools, in either spelling, and its other doors.
      {"googleSearch", kGemini, [](Json& b) { b["tools"].push_back({{"googleSearch", {}}}); },
       "runs at the provider"},
      {"google_search_retrieval", kGemini,
       [](Json& b) { b["tools"].push_back({{"google_search_retrieval", {}}}); },
       "runs at the provider"},
      {"googleMaps", kGemini, [](Json& b) { b["tools"].push_back({{"googleMaps", {}}}); },
       "runs at the provider"},
      {"google_maps", kGemini, [](Json& b) { b["tools"].push_back({{"google_maps", {}}}); },
       "runs at the provider"},
      {"computer_use", kGemini, [](Json& b) { b["tools"].push_back({{"computer_use", {}}}); },
       "runs at the provider"},
      {"file_search", kGemini, [](Json& b) { b["tools"].push_back({{"file_search", {}}}); },
       "runs at the provider"},
      {"enterpriseWebSearch", kGemini,
       [](Json& b) { b["tools"].push_back({{"enterpriseWebSearch", {}}}); },
       "runs at the provider"},
      {"retrieval", kGemini, [](Json& b) { b["tools"].push_back({{"retrieval", {}}}); },
       "runs at the provider"},
      {"a second key beside the declarations", kGemini,
       [](Json& b) { b["tools"][0]["urlContext"] = Json::object(); }, "runs at the provider"},
      {"a file by URI", kGemini,
       [](Json& b) {
         b["contents"][0]["parts"].push_back(
             {{"fileData", {{"fileUri", "https://evil/x"}, {"mimeType", "text/plain"}}}});
       },
       "fileData is not accepted"},
      {"code execution results", kGemini,
       [](Json& b) { b["contents"][0]["parts"].push_back({{"executableCode", {}}}); },
       "executableCode"},
      {"a cached content", kGemini, [](Json& b) { b["cachedContent"] = "cachedContents/x"; },
       "cachedContent"},
      {"snake-case config", kGemini,
       [](Json& b) { b["generation_config"] = {{"max_output_tokens", 999999}}; },
       "generation_config"},
      {"snake-case output limit", kGemini,
       [](Json& b) { b["generationConfig"]["max_output_tokens"] = 999999; }, "max_output_tokens"},
      {"several candidates", kGemini, [](Json& b) { b["generationConfig"]["candidateCount"] = 8; },
       "candidateCount must be 1"},
      {"a model in the body", kGemini, [](Json& b) { b["model"] = "models/other"; },
       "the path names the model"},
  };
  for (const Refusal& c : cases) {
    SCOPED_TRACE(c.name);
    Json body = c.wire == kAnthropic ? ClaudeCodeBody() : c.wire == kResponses ? CodexBody()
                                                                               : GeminiBody();
    c.edit(body);
    const absl::Status s = Check(c.wire, body);
    ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << "accepted";
    EXPECT_THAT(s.message(), HasSubstr(c.why));
    EXPECT_THAT(s.message(), HasSubstr("ptxbench refused the request"));
  }
}

TEST(RequestAllowlist, DepthDuplicatesAndNonObjectsAreRefusedBeforeAnyUse) {
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  EXPECT_THAT(CheckRequestBody(kAnthropic, RouteKind::kModelCall, deep).status().message(),
              HasSubstr("nested more than 64 levels deep"));
  std::string objects;
  for (int i = 0; i < 100; ++i) objects += "{\"a\":";
  objects += "1" + std::string(100, '}');
  EXPECT_THAT(CheckRequestBody(kGemini, RouteKind::kModelCall, objects).status().message(),
              HasSubstr("nested more than 64"));
  // Two readers would keep different copies of a repeated key.
  EXPECT_THAT(CheckRequestBody(kAnthropic, RouteKind::kModelCall,
                               R"({"model":"a","model":"b","messages":[],"max_tokens":1})")
                  .status()
                  .message(),
              HasSubstr("more than once"));
  EXPECT_FALSE(CheckRequestBody(kAnthropic, RouteKind::kModelCall, "[1]").ok());
  EXPECT_FALSE(CheckRequestBody(kAnthropic, RouteKind::kModelCall, "\"x\"").ok());
  EXPECT_FALSE(CheckRequestBody(kAnthropic, RouteKind::kModelCall, "{\"model\":\"\xff\"}").ok())
      << "not UTF-8";
  EXPECT_FALSE(CheckRequestBody(kAnthropic, RouteKind::kModelCall,
                                R"({"model":"a","messages":[],"max_tokens":-5})")
                   .ok());
}

}  // namespace
}  // namespace ptxbench::agent_gateway
