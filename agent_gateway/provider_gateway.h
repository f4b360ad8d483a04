#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDER_GATEWAY_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDER_GATEWAY_H_

// The task handler of a real gateway: each LLM task goes to the provider of
// its model, within that model's limits (call_limits.h), and comes back as
// the answer with usage and cost, or as a failure of the class the provider
// outcome says (provider.h). Every call is one executor slot.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent_gateway/call_limits.h"
#include "agent_gateway/model_registry.h"
#include "agent_gateway/provider.h"
#include "executor/task_handler.h"

namespace ptxbench::agent_gateway {

// A provider for `config`: openai, anthropic, gemini (key from its
// api_key_env), scripted
// (answers_dir, relative paths from the data dir). A keyless (self-hosted)
// openai endpoint must answer GET /models with the configured model id
// (kUnavailable / kNotFound otherwise). kFailedPrecondition
// naming the variable when the key is missing.
absl::StatusOr<std::unique_ptr<Provider>> MakeProvider(const ModelConfig& config,
                                                       absl::Duration timeout);

class ProviderGatewayHandler final : public executor::TaskHandler {
 public:
  struct Served {
    std::unique_ptr<Provider> provider;
    std::unique_ptr<CallLimits> limits;
  };
  explicit ProviderGatewayHandler(std::map<std::string, Served> models)
      : models_(std::move(models)) {}
  ptxbench::v1::CompleteRequest Run(const ptxbench::v1::Task& task,
                                    const std::atomic<bool>& cancelled) override;
  std::vector<std::string> ModelNames() const;

 private:
  std::map<std::string, Served> models_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDER_GATEWAY_H_
