#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_REQUEST_ALLOWLIST_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_REQUEST_ALLOWLIST_H_

// What the body of an agent's model call may hold, per API (docs/AGENTS.md,
// "The model proxy"). Read as hostile input and checked against allow-lists
// before anything of it goes upstream; whatever is not on them is refused by
// name (INVALID_ARGUMENT, which the proxy answers in the API's error shape),
// never passed on and never silently dropped:
//  - at most kMaxDepth levels of nesting (checked before parsing) and strict
//    JSON (a key repeated in one object is refused: two readers would keep
//    different copies);
//  - the top-level fields each API's pinned CLI sends, with their types;
//    fields that reach state or services outside the call (stored responses,
//    conversations, background runs, cached contents, remote MCP servers,
//    containers, priced tiers) are not on the list;
//  - tools only of the kinds the CLI runs itself (functions, custom tools);
//    a tool that runs at the provider (web search, URL fetch, code
//    execution, file search, maps, computer use, ...) is refused;
//  - content that would make the provider fetch a URL or read a stored file
//    (image or document sources by URL or file id, Gemini fileData) is
//    refused; images travel inline only;
//  - Gemini's generationConfig: only known keys, one candidate.
// The facts the proxy needs to reserve the call's budget come back with the
// body: the output asked for and the number of media parts.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent_gateway/agent/routes.h"
#include "agents/clis.h"
#include "common/json_reader.h"

namespace ptxbench::agent_gateway {

struct CheckedRequest {
  StrictJson body;
  std::string requested_model;       // the body's "model" ("" where the path names it)
  int64_t requested_max_output = 0;  // the body's output limit; 0 when not given
  int media_parts = 0;               // images and other inline media
};

inline constexpr int kMaxJsonDepth = 64;

absl::StatusOr<CheckedRequest> CheckRequestBody(agents::Wire wire, RouteKind kind,
                                                absl::string_view text);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_REQUEST_ALLOWLIST_H_
