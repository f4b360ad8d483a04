#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDERS_HTTP_PROVIDER_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDERS_HTTP_PROVIDER_H_

// What every HTTPS+JSON provider shares: one POST per call with a timeout,
// the failure classes of provider.h for anything but a 200, the cost from
// the usage and the registry's prices, the wall time. A provider says only
// where to post, which headers, the body, and how to read the answer.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent_gateway/models/model_registry.h"
#include "agent_gateway/providers/provider.h"

namespace ptxbench::agent_gateway {

// A provider's wire format.
struct ProviderShape {
  std::string (*url)(const ModelConfig& config);
  std::vector<std::string> (*headers)(const std::string& key);  // besides Content-Type
  std::string (*body)(const ModelConfig& config, const ptxbench::v1::LlmRequest& request);
  // Text, reasoning, finish reason ("stop", "length", ...), usage.
  absl::StatusOr<ptxbench::v1::LlmResponse> (*parse)(const std::string& body);
};

// `http` is not owned and must outlive the provider.
class HttpJsonProvider final : public Provider {
 public:
  HttpJsonProvider(const ProviderShape& shape, ModelConfig config, std::string api_key,
                   absl::Duration timeout, HttpClient* http)
      : shape_(shape),
        config_(std::move(config)),
        key_(std::move(api_key)),
        timeout_(timeout),
        http_(http) {}
  void Start(ModelCall call, Done done) override;

 private:
  CallOutcome Finish(const HttpResult& response, absl::Time start) const;

  const ProviderShape shape_;
  const ModelConfig config_;
  const std::string key_;
  const absl::Duration timeout_;
  HttpClient* const http_;
};

// The registry's parameters overlaid with the experiment's (where set).
ptxbench::v1::ModelParameters EffectiveParams(const ModelConfig& config,
                                              const ptxbench::v1::LlmRequest& request);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDERS_HTTP_PROVIDER_H_
