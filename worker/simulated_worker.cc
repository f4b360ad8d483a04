#include "worker/simulated_worker.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ptxbench::worker {
namespace {

using ::ptxbench::v1::CompleteRequest;

// Keeps injected faults independent of the other simulated executor's.
constexpr char kFaultSalt[] = "ptxb-sim-worker";

}  // namespace

ptxbench::v1::Capabilities SimulatedWorkerCapabilities(int gpus, int slots,
                                                       const std::string& sm_arch) {
  ptxbench::v1::Capabilities caps;
  for (int i = 0; i < gpus; ++i) {
    ptxbench::v1::Gpu* gpu = caps.add_gpus();
    gpu->set_index(i);
    gpu->set_model(sm_arch == "sm_90" ? "Simulated H200" : absl::StrCat("Simulated ", sm_arch));
    gpu->set_sm_arch(sm_arch);
    gpu->set_memory_bytes(int64_t{141} * 1000 * 1000 * 1000);
    gpu->set_healthy(true);
  }
  caps.set_slots(slots);
  caps.set_simulated(true);
  caps.set_profiler("simulated (made-up profiles, labelled so)");
  return caps;
}

SimulatedWorkerHandler::SimulatedWorkerHandler(Options options)
    : options_(std::move(options)),
      faults_(kFaultSalt, options_.seed, options_.faults),
      evaluator_(SimulatedEvaluator::Options{
          .seed = options_.seed,
          .worker_id = options_.worker_id,
          .gpu_model = "Simulated H200",
          .definitions = options_.definitions}) {}

bool SimulatedWorkerHandler::SimulateWork(const std::atomic<bool>& cancelled) {
  WorkerMetrics* metrics = options_.metrics;
  if (metrics == nullptr) return executor::SleepUnlessCancelled(options_.latency, cancelled);
  const absl::Duration compile = options_.gpus > 0 ? options_.latency / 2 : options_.latency;
  const absl::Time start = absl::Now();
  if (!executor::SleepUnlessCancelled(compile, cancelled)) return false;
  const absl::Time held = absl::Now();
  metrics->Compiled(held - start);
  if (options_.gpus <= 0) return true;
  const int gpu = static_cast<int>(started_.fetch_add(1) % options_.gpus);
  const absl::Time timed = absl::Now();
  const bool done = executor::SleepUnlessCancelled(options_.latency - compile, cancelled);
  metrics->GpuTimedWork(gpu, absl::Now() - timed);
  metrics->GpuBusy(gpu, absl::Now() - held);
  return done;
}

CompleteRequest SimulatedWorkerHandler::Run(const ptxbench::v1::Task& task,
                                            const std::atomic<bool>& cancelled) {
  if (std::optional<CompleteRequest> crashed = faults_.CrashAfterLease(task)) return *crashed;
  if (!task.has_eval()) {
    return executor::FailureReport(ptxbench::v1::INFRA, absl::StrCat("a worker runs EVAL tasks; got ",
                                     ptxbench::v1::TaskKind_Name(task.kind()), " task ",
                                     task.lease().task_id()));
  }
  const absl::Time start = absl::Now();
  if (!SimulateWork(cancelled)) {
    return executor::FailureReport(ptxbench::v1::INFRA, "cancelled");
  }
  if (faults_.Fails(task)) {
    return executor::FailureReport(ptxbench::v1::INFRA, "simulated infrastructure failure (--failure-rate)");
  }
  CompleteRequest out;
  *out.mutable_eval() = evaluator_.Evaluate(task.eval());
  out.mutable_eval()->set_wall_time_ms(absl::ToInt64Milliseconds(absl::Now() - start));
  return out;
}

}  // namespace ptxbench::worker
