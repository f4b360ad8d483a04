#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDERS_PROVIDER_TEST_UTIL_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDERS_PROVIDER_TEST_UTIL_H_

// For the providers' tests: one call, started and waited for. The gateway
// never waits on a call (ProviderGatewayHandler::StartCall takes each outcome
// in the provider's callback), so this stays out of the product library.

#include <future>
#include <utility>

#include "agent_gateway/providers/provider.h"

namespace ptxbench::agent_gateway::testing_support {

inline CallOutcome CallAndWait(Provider& provider, ModelCall call) {
  std::promise<CallOutcome> result;
  std::future<CallOutcome> future = result.get_future();
  provider.Start(std::move(call), [&result](CallOutcome out) { result.set_value(std::move(out)); });
  return future.get();
}

}  // namespace ptxbench::agent_gateway::testing_support

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDERS_PROVIDER_TEST_UTIL_H_
