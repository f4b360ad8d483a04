#ifndef PTXBENCH_WORKER_SIMULATED_WORKER_H_
#define PTXBENCH_WORKER_SIMULATED_WORKER_H_

// The task handler of `ptxbench-worker --simulate`: pretends to evaluate for
// a while, injects infrastructure failures and crashes on request, and
// answers with SimulatedEvaluator results.

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "executor/fault_injection.h"
#include "executor/task_handler.h"
#include "ptxbench/v1/executor.pb.h"
#include "worker/simulated_evaluator.h"
#include "worker/worker_metrics.h"

namespace ptxbench::worker {

// What a simulated worker announces: `gpus` GPUs "Simulated H200" (sm_90),
// `slots` slots, simulated = true. No GPUs means compile-only.
ptxbench::v1::Capabilities SimulatedWorkerCapabilities(int gpus, int slots,
                                                       const std::string& sm_arch = "sm_90");

// Thread-safe. Injected faults are drawn from (seed, task id, lease id), so a
// run is reproducible and a re-leased task gets a fresh draw.
class SimulatedWorkerHandler final : public executor::TaskHandler {
 public:
  struct Options {
    uint64_t seed = 0;
    std::string worker_id;
    // Simulated evaluation time.
    absl::Duration latency = absl::Milliseconds(20);
    // Injected faults; a failure is an INFRA one.
    executor::FaultRates faults;
    // The workloads of a request that names none (SimulatedEvaluator).
    const workloads::DefinitionRegistry* definitions = nullptr;
    // Fed as a real worker's would be, so tests see the same page: the first
    // half of `latency` counts as compiling, the second as timed work on
    // GPU (task number mod `gpus`), held from just before to just after it.
    // Not owned; may be null. With no GPUs, all of it is compiling.
    WorkerMetrics* metrics = nullptr;
    int gpus = 0;
  };

  explicit SimulatedWorkerHandler(Options options);

  ptxbench::v1::CompleteRequest Run(const ptxbench::v1::Task& task,
                                    const std::atomic<bool>& cancelled) override;

 private:
  // Sleeps `latency`, feeding metrics as described in Options; false when
  // cancelled.
  bool SimulateWork(const std::atomic<bool>& cancelled);

  Options options_;
  executor::FaultInjector faults_;
  SimulatedEvaluator evaluator_;
  std::atomic<int64_t> started_{0};  // picks the simulated GPU
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_SIMULATED_WORKER_H_
