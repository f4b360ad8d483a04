#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_ROUTES_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_ROUTES_H_

// The calls an agent session may make through its model proxy, per API: an
// allow-list of (method, path, query) that the CLI's request must match
// exactly, and for each the upstream URL, which the proxy builds itself from
// the registry's base URL and the pinned model. Nothing of the CLI's target
// is copied into the URL (so no fragment, dot segment or second model name
// in a path can reach the provider):
//
//   OpenAI Responses   POST /v1/responses                      model call
//   Anthropic Messages POST /v1/messages[?beta=true]           model call
//                      POST /v1/messages/count_tokens[?beta=true]  token count
//   Gemini             POST /v1beta/models/M:streamGenerateContent[?alt=sse]
//                      POST /v1beta/models/M:generateContent   model call
//                      POST /v1beta/models/M:countTokens       token count
//
// (M is any model name; the pinned model goes upstream in its place.) The
// proxy also asks the provider to count a prompt's tokens before admitting
// a call the budget may not cover (model_proxy.h): CounterUrl.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent_gateway/agent/client_request.h"
#include "agents/clis.h"

namespace ptxbench::agent_gateway {

enum class RouteKind {
  kModelCall,   // an answer: counted, budgeted
  kTokenCount,  // the provider counts a prompt's tokens: free, rate-limited
};

struct Route {
  RouteKind kind = RouteKind::kModelCall;
  // The model the CLI named in the path (Gemini), for the record; "".
  std::string requested_model;
  // Where the proxy sends the call: scheme, host and path of its own making.
  std::string upstream_url;
};

// The route `request` takes, or NOT_FOUND naming what a session may call.
// `base_url` is the registry's ("https://api.openai.com/v1",
// "https://api.anthropic.com", ".../v1beta").
absl::StatusOr<Route> MatchRoute(agents::Wire wire, const ClientRequest& request,
                                 absl::string_view base_url, absl::string_view pinned_model);

// The provider's token counter for a prompt of `wire`: Responses
// POST {base}/responses/input_tokens, Anthropic {base}/v1/messages/count_tokens,
// Gemini {base}/models/M:countTokens.
std::string CounterUrl(agents::Wire wire, absl::string_view base_url,
                       absl::string_view pinned_model);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_ROUTES_H_
