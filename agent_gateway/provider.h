#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDER_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDER_H_

// A model provider as the gateway calls it, and the rules every provider
// shares for turning an HTTP outcome into a failure class (DESIGN §2):
//  - transport errors, 408, 409, 429 and 5xx (529 included) are MODEL_API:
//    retried by the scheduler with backoff, after Retry-After when given;
//  - 401/403 (authentication), 404 (unknown model), 400/413/422 (bad request,
//    context window exceeded) and other 4xx are TERMINAL: the trajectory
//    ends with that reason, nothing is retried.
// Messages never contain the API key (it is scrubbed if a provider echoes it).

#include <atomic>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "agent_gateway/http_client.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::agent_gateway {

struct CallOutcome {
  std::optional<ptxbench::v1::LlmResponse> response;  // set on success
  ptxbench::v1::FailureClass failure = ptxbench::v1::FAILURE_CLASS_UNSPECIFIED;
  std::string message;
  int64_t retry_after_ms = 0;
};

class Provider {
 public:
  virtual ~Provider() = default;
  // One model call. Thread-safe.
  virtual CallOutcome Call(const ptxbench::v1::LlmRequest& request) = 0;
};

// The failure of a non-2xx response or a transport error. `provider` names
// the provider in the message; `key` is scrubbed from it.
CallOutcome ClassifyFailure(const absl::StatusOr<HttpResponse>& response,
                            const std::string& provider, const std::string& key);

// Retry-After in milliseconds (seconds form; 0 when absent or a date).
int64_t RetryAfterMs(const HttpResponse& response);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDER_H_
