// The allow-list of a session's model calls (routes.h).
#include "agent_gateway/agent/routes.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ptxbench::agent_gateway {
namespace {

absl::string_view Base(absl::string_view base_url) { return absl::StripSuffix(base_url, "/"); }

// The query is exactly `allowed` (name=value) or empty; anything else, a
// parameter the upstream might read (a key, a second alt), is refused.
bool QueryIs(const ClientRequest& r, absl::string_view allowed_name, absl::string_view allowed_value,
             bool* present) {
  *present = false;
  if (r.query.empty()) return true;
  if (r.query.size() != 1) return false;
  *present = r.query[0].first == allowed_name && r.query[0].second == allowed_value;
  return *present;
}

// A model name as Gemini's paths carry it.
bool IsModelName(absl::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') {
      return false;
    }
  }
  return true;
}

absl::Status NotAllowed(agents::Wire wire, const ClientRequest& r) {
  return absl::NotFoundError(absl::StrCat("a session may call only its model (",
                                          agents::WireTitle(wire), "), not ", r.method, " ",
                                          r.path));
}

}  // namespace

absl::StatusOr<Route> MatchRoute(agents::Wire wire, const ClientRequest& r,
                                 absl::string_view base_url, absl::string_view pinned_model) {
  if (r.method != "POST") return NotAllowed(wire, r);
  const absl::string_view base = Base(base_url);
  Route route;
  bool present = false;
  switch (wire) {
    case agents::Wire::kOpenAIResponses:
      if (r.path != "/v1/responses" || !r.query.empty()) return NotAllowed(wire, r);
      route.upstream_url = absl::StrCat(base, "/responses");
      return route;
    case agents::Wire::kAnthropicMessages: {
      const bool counter = r.path == "/v1/messages/count_tokens";
      if ((r.path != "/v1/messages" && !counter) || !QueryIs(r, "beta", "true", &present)) {
        return NotAllowed(wire, r);
      }
      route.kind = counter ? RouteKind::kTokenCount : RouteKind::kModelCall;
      route.upstream_url = absl::StrCat(base, r.path, present ? "?beta=true" : "");
      return route;
    }
    case agents::Wire::kGeminiGenerate: {
      absl::string_view rest = r.path;
      if (!absl::ConsumePrefix(&rest, "/v1beta/models/")) return NotAllowed(wire, r);
      const size_t colon = rest.find(':');
      if (colon == absl::string_view::npos || !IsModelName(rest.substr(0, colon))) {
        return NotAllowed(wire, r);
      }
      const absl::string_view method = rest.substr(colon + 1);
      if (method == "streamGenerateContent") {
        if (!QueryIs(r, "alt", "sse", &present)) return NotAllowed(wire, r);
      } else if (method == "generateContent" || method == "countTokens") {
        if (!r.query.empty()) return NotAllowed(wire, r);
      } else {
        return NotAllowed(wire, r);
      }
      route.kind = method == "countTokens" ? RouteKind::kTokenCount : RouteKind::kModelCall;
      route.requested_model = std::string(rest.substr(0, colon));
      route.upstream_url =
          absl::StrCat(base, "/models/", pinned_model, ":", method, present ? "?alt=sse" : "");
      return route;
    }
  }
  return NotAllowed(wire, r);
}

std::string CounterUrl(agents::Wire wire, absl::string_view base_url,
                       absl::string_view pinned_model) {
  const absl::string_view base = Base(base_url);
  switch (wire) {
    case agents::Wire::kOpenAIResponses: return absl::StrCat(base, "/responses/input_tokens");
    case agents::Wire::kAnthropicMessages: return absl::StrCat(base, "/v1/messages/count_tokens");
    case agents::Wire::kGeminiGenerate:
      return absl::StrCat(base, "/models/", pinned_model, ":countTokens");
  }
  return "";
}

}  // namespace ptxbench::agent_gateway
