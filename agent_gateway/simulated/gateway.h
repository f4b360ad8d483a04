#ifndef PTXBENCH_AGENT_GATEWAY_SIMULATED_GATEWAY_H_
#define PTXBENCH_AGENT_GATEWAY_SIMULATED_GATEWAY_H_

// The task handler of `ptxbench-gateway --simulate`: answers LLM tasks with
// SimulatedModel after a pretend latency, injects model-API failures and
// crashes on request, and can log every model call it makes.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent_gateway/providers/scripted_answers.h"
#include "agent_gateway/simulated/model.h"
#include "executor/fault_injection.h"
#include "executor/task_handler.h"
#include "ptxbench/v1/executor.pb.h"

namespace ptxbench::agent_gateway {

// What a simulated gateway announces: `models` (empty: any model), `slots`,
// simulated = true.
ptxbench::v1::Capabilities SimulatedGatewayCapabilities(const std::vector<std::string>& models,
                                                        int slots);

// Thread-safe. Injected faults are drawn from (seed, task id, lease id), so a
// run is reproducible and a re-leased task gets a fresh draw.
class SimulatedGatewayHandler final : public executor::TaskHandler {
 public:
  struct Options {
    uint64_t seed = 0;
    absl::Duration latency = absl::Milliseconds(50);
    // Injected faults; a failure is a MODEL_API one (a simulated 429,
    // retry_after 100 ms).
    executor::FaultRates faults;
    // Models served; empty serves any. Others end TERMINAL ("unknown model").
    std::vector<std::string> models;
    // When set, "<trajectory_id> <turn>\n" is appended here before every
    // model call that produces an answer (not for injected failures), so
    // tests can prove no answer is requested twice.
    std::string request_log_path;
    // Answers from this folder (scripted_answers.h) instead of generated
    // ones; empty: generated.
    std::string answers_dir;
  };

  // Fails when the request log cannot be opened or the answers folder
  // cannot be read.
  static absl::StatusOr<std::unique_ptr<SimulatedGatewayHandler>> Create(Options options);
  ~SimulatedGatewayHandler() override;

  ptxbench::v1::CompleteRequest Run(const ptxbench::v1::Task& task,
                                    const std::atomic<bool>& cancelled) override;

 private:
  SimulatedGatewayHandler(Options options, int request_log_fd,
                          std::unique_ptr<ScriptedAnswers> scripted);

  Options options_;
  executor::FaultInjector faults_;
  SimulatedModel model_;
  std::unique_ptr<ScriptedAnswers> scripted_;  // null: generated answers
  // O_APPEND, so concurrent lines never interleave; -1 when not logging.
  int request_log_fd_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_SIMULATED_GATEWAY_H_
