#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDERS_PROVIDER_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDERS_PROVIDER_H_

// A model provider as the gateway calls it, and the rules every provider
// shares for turning an HTTP outcome into a failure class
// (docs/ARCHITECTURE.md, "The life of an experiment"):
//  - transport errors, 408, 409, 429 and 5xx (529 included) are MODEL_API:
//    retried by the scheduler with backoff, after Retry-After when given;
//  - 401/403 (authentication), 404 (unknown model), 400/413/422 (bad request,
//    context window exceeded) and other 4xx are TERMINAL: the trajectory
//    ends with that reason, nothing is retried.
// Messages never contain the API key (it is scrubbed if a provider echoes it).

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "agent_gateway/providers/http_client.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::agent_gateway {

struct CallOutcome {
  std::optional<ptxbench::v1::LlmResponse> response;  // set on success
  ptxbench::v1::FailureClass failure = ptxbench::v1::FAILURE_CLASS_UNSPECIFIED;
  std::string message;
  int64_t retry_after_ms = 0;
};

// One model call as the gateway asks it.
struct ModelCall {
  ptxbench::v1::LlmRequest request;
  int turn = 0;  // the trajectory's turn this answer is for
  // Set when the lease is revoked or the gateway stops; may be null.
  std::shared_ptr<const std::atomic<bool>> cancelled;
};

class Provider {
 public:
  using Done = absl::AnyInvocable<void(CallOutcome) &&>;
  virtual ~Provider() = default;
  // Starts one model call and returns without waiting; `done` runs exactly
  // once, on any thread, with the outcome. Thread-safe.
  virtual void Start(ModelCall call, Done done) = 0;
};

// The failure of a non-2xx response or a transport error. `provider` names
// the provider in the message; `key` is scrubbed from it.
CallOutcome ClassifyFailure(const absl::StatusOr<HttpResponse>& response,
                            const std::string& provider, const std::string& key);

// Retry-After in milliseconds (seconds form; 0 when absent or a date).
int64_t RetryAfterMs(const HttpResponse& response);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDERS_PROVIDER_H_
