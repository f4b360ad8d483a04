#ifndef PTXBENCH_WORKER_GPU_WORKER_H_
#define PTXBENCH_WORKER_GPU_WORKER_H_

// The task handler of a worker with GPUs: compile on any of the executor's
// slots (the compile pool), then evaluate on a GPU held exclusively for the
// run — one timing run per GPU at a time, all GPUs busy at once. After a run
// that crashed, hung or broke its CUDA context, the GPU is health-checked
// before its next task; a GPU that stays unhealthy is taken out of service
// (and the worker is stopped when none is left).

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "executor/task_handler.h"
#include "worker/gpu/device_info.h"
#include "worker/gpu_eval.h"
#include "worker/worker_metrics.h"

namespace ptxbench::worker {

// Exclusive use of GPUs. Thread-safe.
class GpuPool {
 public:
  explicit GpuPool(std::vector<gpu::GpuInfo> gpus);
  // Blocks until a healthy GPU of `sm_arch` is free. nullopt when none is
  // healthy any more, or when `cancelled` became true.
  std::optional<gpu::GpuInfo> Acquire(const std::atomic<bool>& cancelled,
                                      const std::string& sm_arch);
  // The architecture of a healthy GPU here that `targets` names (the first
  // such GPU's); empty when none.
  std::string ArchitectureFor(const std::vector<std::string>& targets) const;
  void Release(int index);
  // Takes the GPU out of service for good.
  void MarkUnhealthy(int index);
  int healthy_count() const;

 private:
  struct Slot {
    gpu::GpuInfo info;
    bool busy = false;
    bool healthy = true;
  };
  mutable absl::Mutex mu_;
  absl::CondVar changed_;  // a GPU was released or taken out of service
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
};

// The registration of a worker with these GPUs and `slots` concurrent tasks.
ptxbench::v1::Capabilities GpuWorkerCapabilities(const std::vector<gpu::GpuInfo>& gpus, int slots);

class GpuWorkerHandler final : public executor::TaskHandler {
 public:
  // Not owned; must outlive the handler. `on_no_gpu` is called (once) with
  // the reason when the last healthy GPU is taken out of service. `metrics`
  // gets compile times and the time each GPU is held.
  GpuWorkerHandler(GpuEvaluator* evaluator, Compiler* compiler,
                   const workloads::DefinitionRegistry* definitions, GpuPool* pool,
                   WorkerMetrics* metrics, std::string worker_id, std::string toolkit_version,
                   std::function<void(const std::string&)> on_no_gpu);
  ptxbench::v1::CompleteRequest Run(const ptxbench::v1::Task& task,
                                    const std::atomic<bool>& cancelled) override;

 private:
  // Health check after a suspicious run; one retry after a pause, since a
  // killed process's context can take a moment to be torn down.
  void CheckAfterFailure(const gpu::GpuInfo& gpu);

  GpuEvaluator* evaluator_;
  Compiler* compiler_;
  const workloads::DefinitionRegistry* definitions_;
  GpuPool* pool_;
  WorkerMetrics* metrics_;
  const std::string worker_id_;
  const std::string toolkit_version_;
  std::function<void(const std::string&)> on_no_gpu_;
  std::atomic<bool> reported_no_gpu_{false};
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_GPU_WORKER_H_
