// The allow-list of a session's model calls (routes.h): the upstream URL is
// the proxy's own, with the pinned model; nothing else is a route.
#include "agent_gateway/agent/routes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace ptxbench::agent_gateway {
namespace {

using ::testing::HasSubstr;

ClientRequest Request(const std::string& method, const std::string& path,
                    std::vector<std::pair<std::string, std::string>> query = {}) {
  ClientRequest r;
  r.method = method;
  r.path = path;
  r.query = std::move(query);
  return r;
}

TEST(Routes, EachApiHasItsCallsAndTheUpstreamUrlIsBuiltFromTheRegistry) {
  struct Case {
    agents::Wire wire;
    ClientRequest request;
    const char* base;
    RouteKind kind;
    const char* url;
  };
  const Case cases[] = {
      {agents::Wire::kOpenAIResponses, Request("POST", "/v1/responses"), "https://api.openai.com/v1/",
       RouteKind::kModelCall, "https://api.openai.com/v1/responses"},
      {agents::Wire::kAnthropicMessages, Request("POST", "/v1/messages", {{"beta", "true"}}),
       "https://api.anthropic.com", RouteKind::kModelCall,
       "https://api.anthropic.com/v1/messages?beta=true"},
      {agents::Wire::kAnthropicMessages, Request("POST", "/v1/messages/count_tokens"),
       "https://api.anthropic.com", RouteKind::kTokenCount,
       "https://api.anthropic.com/v1/messages/count_tokens"},
      {agents::Wire::kGeminiGenerate,
       Request("POST", "/v1beta/models/gemini-other:streamGenerateContent", {{"alt", "sse"}}),
       "https://g.example/v1beta", RouteKind::kModelCall,
       "https://g.example/v1beta/models/pinned:streamGenerateContent?alt=sse"},
      {agents::Wire::kGeminiGenerate,
       Request("POST", "/v1beta/models/gemini-other:streamGenerateContent"),
       "https://g.example/v1beta", RouteKind::kModelCall,
       "https://g.example/v1beta/models/pinned:streamGenerateContent"},
      {agents::Wire::kGeminiGenerate, Request("POST", "/v1beta/models/x:countTokens"),
       "https://g.example/v1beta", RouteKind::kTokenCount,
       "https://g.example/v1beta/models/pinned:countTokens"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.request.path);
    absl::StatusOr<Route> route = MatchRoute(c.wire, c.request, c.base, "pinned");
    ASSERT_TRUE(route.ok()) << route.status();
    EXPECT_EQ(route->kind, c.kind);
    EXPECT_EQ(route->upstream_url, c.url);
  }
}

TEST(Routes, EveryOtherPathMethodOrQueryIsNotARoute) {
  struct Case {
    agents::Wire wire;
    ClientRequest request;
  };
  const Case cases[] = {
      {agents::Wire::kAnthropicMessages, Request("POST", "/v1/messages/batches")},
      {agents::Wire::kAnthropicMessages, Request("POST", "/v1/complete")},
      {agents::Wire::kAnthropicMessages, Request("POST", "/v1/embeddings")},
      {agents::Wire::kAnthropicMessages, Request("POST", "/admin/anything")},
      {agents::Wire::kAnthropicMessages, Request("GET", "/v1/messages")},
      {agents::Wire::kAnthropicMessages, Request("GET", "/v1/organizations/api_keys")},
      {agents::Wire::kAnthropicMessages, Request("POST", "/v1/messages", {{"beta", "false"}})},
      {agents::Wire::kAnthropicMessages,
       Request("POST", "/v1/messages", {{"beta", "true"}, {"key", "k"}})},
      {agents::Wire::kOpenAIResponses, Request("POST", "/v1/responses/compact")},
      {agents::Wire::kOpenAIResponses, Request("POST", "/v1/chat/completions")},
      {agents::Wire::kOpenAIResponses, Request("POST", "/v1/responses", {{"x", "1"}})},
      {agents::Wire::kGeminiGenerate, Request("POST", "/v1beta/tunedModels/t:generateContent")},
      {agents::Wire::kGeminiGenerate, Request("POST", "/v1beta/models/m:embedContent")},
      {agents::Wire::kGeminiGenerate, Request("POST", "/v1beta/models/m:x:generateContent")},
      {agents::Wire::kGeminiGenerate, Request("POST", "/v1beta/models/m:generateContent/x")},
      {agents::Wire::kGeminiGenerate, Request("POST", "/v1/models/m:generateContent")},
      {agents::Wire::kGeminiGenerate,
       Request("POST", "/v1beta/models/m:generateContent", {{"alt", "sse"}})},
      {agents::Wire::kGeminiGenerate,
       Request("POST", "/v1beta/models/m:streamGenerateContent", {{"alt", "sse"}, {"alt", "json"}})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.request.method, " ", c.request.path));
    absl::StatusOr<Route> route = MatchRoute(c.wire, c.request, "https://p.example/v1", "pinned");
    ASSERT_FALSE(route.ok()) << route->upstream_url;
    EXPECT_EQ(route.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(route.status().message(), HasSubstr("a session may call only its model"));
  }
}

}  // namespace
}  // namespace ptxbench::agent_gateway
