// An agent's shell can send the model proxy any bytes (agent_gateway/agent/
// model_proxy.h): the request reader, the route, the body's allow-lists and
// the policy's edits must answer every input without throwing, crashing or
// recursing without bound. The first byte picks the API and how the bytes
// arrive; the rest is the connection's bytes. The provider's answer parsers
// read the same bytes as an answer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent_gateway/agent/client_request.h"
#include "agent_gateway/agent/model_proxy_wire.h"
#include "agent_gateway/agent/request_allowlist.h"
#include "agent_gateway/agent/request_policy.h"
#include "agent_gateway/agent/routes.h"
#include "agent_gateway/agent/stream_usage.h"

namespace ag = ptxbench::agent_gateway;
namespace agents = ptxbench::agents;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const agents::Wire wire = static_cast<agents::Wire>(data[0] % 3);
  const size_t step = 1 + (data[0] >> 2);  // the bytes arrive in pieces of this size
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  ag::ClientRequestParser parser;
  for (size_t at = 0; at < bytes.size() && parser.state() != ag::ClientRequestParser::State::kError;
       at += step) {
    parser.Feed(absl::string_view(bytes).substr(at, step));
  }
  parser.Finish();
  if (parser.state() == ag::ClientRequestParser::State::kDone) {
    ag::ClientRequest& r = parser.request();
    // The reader never lets a dot segment, an encoding, a fragment or a
    // backslash through.
    if (r.path.find_first_of("%#\\") != std::string::npos || r.path.find("//") != std::string::npos ||
        r.path.find("/./") != std::string::npos || r.path.find("/../") != std::string::npos ||
        r.path.ends_with("/.") || r.path.ends_with("/..")) {
      __builtin_trap();
    }
    absl::StatusOr<ag::Route> route = ag::MatchRoute(wire, r, "https://p.example/v1", "pinned");
    const ag::RouteKind kind = route.ok() ? route->kind : ag::RouteKind::kModelCall;
    absl::StatusOr<ag::CheckedRequest> checked = ag::CheckRequestBody(wire, kind, r.body);
    if (checked.ok()) {
      (void)ag::proxy_internal::CounterBody(wire, "pinned", checked->body);
      (void)ag::ApplyRequestPolicy(wire, {"pinned", 1000}, checked->body);
      (void)checked->body.dump(-1, ' ', false, ptxbench::StrictJson::error_handler_t::replace);
    }
  }
  ag::StreamUsage streamed(wire);
  streamed.Feed(bytes);
  ag::StreamUsage plain(wire);
  plain.Answer(bytes);
  (void)ag::proxy_internal::CountedTokens(wire, bytes);
  return 0;
}
