#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDERS_PROVIDER_GATEWAY_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDERS_PROVIDER_GATEWAY_H_

// The task handler of a real gateway. Each leased LLM step is checked (a
// model served here, a context that fits the model's window by the
// scheduler's estimate), queued until a permit for its model's limits is
// granted (call_permits.h: the scheduler's, for the whole fleet) and then
// started on the model's provider; the answer with usage
// and cost, or a failure of the class the provider outcome says
// (provider.h), goes back to the runner. No thread is held per call: one
// thread starts queued calls, the HTTP client's thread finishes them.

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent_gateway/models/call_permits.h"
#include "agent_gateway/models/model_registry.h"
#include "agent_gateway/providers/gateway_metrics.h"
#include "agent_gateway/providers/http_client.h"
#include "agent_gateway/providers/provider.h"
#include "executor/task_handler.h"

namespace ptxbench::agent_gateway {

// A provider for `config`: openai, anthropic, gemini (key from its
// api_key_env; calls go through `http`, which must outlive the provider),
// scripted (answers_dir, relative paths from the data dir). A keyless
// (self-hosted) openai endpoint must answer GET /models with the configured
// model id (kUnavailable / kNotFound otherwise). kFailedPrecondition naming
// the variable when the key is missing.
absl::StatusOr<std::unique_ptr<Provider>> MakeProvider(const ModelConfig& config,
                                                       absl::Duration timeout, HttpClient* http);

class ProviderGatewayHandler final : public executor::AsyncTaskHandler {
 public:
  struct Served {
    ModelConfig config;
    std::unique_ptr<Provider> provider;
  };
  // `permits` is not owned and must outlive the handler.
  ProviderGatewayHandler(std::map<std::string, Served> models, CallPermits* permits);
  // Steps still queued end as cancelled. Calls started must have ended (the
  // runner waits for them).
  ~ProviderGatewayHandler() override;

  void Start(const ptxbench::v1::Task& task, std::shared_ptr<const std::atomic<bool>> cancelled,
             Done done) override;
  std::vector<std::string> ModelNames() const;
  const GatewayMetrics& metrics() const { return metrics_; }

 private:
  struct Pending {
    ModelCall call;
    int64_t reserve_tokens = 0;  // for the tokens-per-minute window
    Done done;
  };
  // Starts queued calls as their models' permits are granted. It asks for
  // one permit of each model at a time, without mu_ (the ask may be an RPC);
  // only this thread takes a step off a queue, so a head stays put.
  void PumpLoop();
  void StartCall(const std::string& name, Served& served, Pending pending,
                 CallPermits::Permit permit);

  GatewayMetrics metrics_;
  absl::Mutex mu_;
  absl::CondVar wake_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Fixed at construction, read without the lock (providers and permits are
  // thread-safe).
  std::map<std::string, Served> models_;
  CallPermits* const permits_;
  // A FIFO per model of models_ (the same keys, fixed too): a step never
  // overtakes an older one.
  std::map<std::string, std::deque<Pending>> queues_ ABSL_GUARDED_BY(mu_);
  std::thread pump_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDERS_PROVIDER_GATEWAY_H_
