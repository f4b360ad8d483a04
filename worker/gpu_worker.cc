#include "worker/gpu_worker.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/gpu_arch.h"
#include "common/log.h"

namespace ptxbench::worker {

namespace v1 = ::ptxbench::v1;

GpuPool::GpuPool(std::vector<gpu::GpuInfo> gpus) {
  for (gpu::GpuInfo& g : gpus) slots_.push_back({std::move(g)});
}

std::optional<gpu::GpuInfo> GpuPool::Acquire(const std::atomic<bool>& cancelled,
                                             const std::string& sm_arch) {
  absl::MutexLock lock(&mu_);
  while (!cancelled.load()) {
    bool any_healthy = false;
    for (Slot& s : slots_) {
      if (s.info.sm_arch != sm_arch) continue;
      any_healthy |= s.healthy;
      if (s.healthy && !s.busy) {
        s.busy = true;
        return s.info;
      }
    }
    if (!any_healthy) return std::nullopt;
    // Woken by Release/MarkUnhealthy; the timeout re-reads `cancelled`.
    changed_.WaitWithTimeout(&mu_, absl::Milliseconds(200));
  }
  return std::nullopt;
}

void GpuPool::Release(int index) {
  absl::MutexLock lock(&mu_);
  for (Slot& s : slots_) {
    if (s.info.index == index) s.busy = false;
  }
  changed_.SignalAll();
}

void GpuPool::MarkUnhealthy(int index) {
  absl::MutexLock lock(&mu_);
  for (Slot& s : slots_) {
    if (s.info.index == index) s.healthy = false;
  }
  changed_.SignalAll();
}

std::string GpuPool::ArchitectureFor(const std::vector<std::string>& targets) const {
  absl::MutexLock lock(&mu_);
  for (const Slot& s : slots_) {
    if (s.healthy && TargetsArchitecture(targets, s.info.sm_arch)) return s.info.sm_arch;
  }
  return "";
}

int GpuPool::healthy_count() const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const Slot& s : slots_) n += s.healthy;
  return n;
}

v1::Capabilities GpuWorkerCapabilities(const std::vector<gpu::GpuInfo>& gpus, int slots) {
  v1::Capabilities caps;
  for (const gpu::GpuInfo& g : gpus) {
    v1::Gpu* gpu = caps.add_gpus();
    gpu->set_index(g.index);
    gpu->set_model(g.name);
    gpu->set_sm_arch(g.sm_arch);
    gpu->set_memory_bytes(static_cast<int64_t>(g.total_memory_bytes));
    gpu->set_healthy(true);
  }
  caps.set_slots(slots);
  return caps;
}

GpuWorkerHandler::GpuWorkerHandler(GpuEvaluator* evaluator, Compiler* compiler,
                                   const workloads::DefinitionRegistry* definitions,
                                   GpuPool* pool, WorkerMetrics* metrics, std::string worker_id,
                                   std::string toolkit_version,
                                   std::function<void(const std::string&)> on_no_gpu)
    : evaluator_(evaluator),
      compiler_(compiler),
      definitions_(definitions),
      pool_(pool),
      metrics_(metrics),
      worker_id_(std::move(worker_id)),
      toolkit_version_(std::move(toolkit_version)),
      on_no_gpu_(std::move(on_no_gpu)) {}

void GpuWorkerHandler::CheckAfterFailure(const gpu::GpuInfo& gpu) {
  absl::Status health = evaluator_->CheckHealth(gpu.index);
  if (!health.ok()) {
    absl::SleepFor(absl::Seconds(2));
    health = evaluator_->CheckHealth(gpu.index);
  }
  if (health.ok()) {
    LogInfo("GPU healthy after a failed run", {{"gpu", std::to_string(gpu.index)}});
    return;
  }
  pool_->MarkUnhealthy(gpu.index);
  metrics_->GpuRetired(gpu.index);
  LogError("GPU unhealthy: taken out of service",
           {{"gpu", std::to_string(gpu.index)}, {"error", health.ToString()}});
  if (pool_->healthy_count() == 0 && !reported_no_gpu_.exchange(true)) {
    on_no_gpu_(absl::StrCat("no healthy GPU left (last: GPU ", gpu.index, ": ",
                            health.message(), ")"));
  }
}

v1::CompleteRequest GpuWorkerHandler::Run(const v1::Task& task,
                                          const std::atomic<bool>& cancelled) {
  if (task.kind() != v1::EVAL) {
    return executor::FailureReport(v1::INFRA, "a worker was given a non-eval task");
  }
  v1::CompleteRequest out;
  const absl::Time compile_start = absl::Now();
  if (task.eval().mode() == v1::COMPILE_ONLY) {
    *out.mutable_eval() = EvaluateCompileOnly(*compiler_, *definitions_, task.eval(), worker_id_,
                                               toolkit_version_);
    metrics_->Compiled(absl::Now() - compile_start);
    return out;
  }
  // Compiled for, and run on, a GPU of an architecture the experiment
  // targets (the scheduler sends only such tasks; an older one names none).
  std::vector<std::string> targets(task.eval().architectures().begin(),
                                   task.eval().architectures().end());
  if (targets.empty()) targets = DefaultArchitectures();
  const std::string arch = pool_->ArchitectureFor(targets);
  if (arch.empty()) {
    return executor::FailureReport(
        v1::INFRA, absl::StrCat("worker ", worker_id_, " has no healthy GPU of ",
                                absl::StrJoin(targets, ", ")));
  }
  v1::EvalRequest request = task.eval();
  request.clear_architectures();
  request.add_architectures(arch);
  CompiledKernel compiled = evaluator_->Compile(request);
  metrics_->Compiled(absl::Now() - compile_start);
  std::optional<gpu::GpuInfo> gpu;
  absl::Time acquired;
  if (compiled.built()) {
    gpu = pool_->Acquire(cancelled, arch);
    acquired = absl::Now();
    if (!gpu) {
      return executor::FailureReport(
          v1::INFRA, absl::StrCat("worker ", worker_id_, " has no healthy GPU of ", arch, " left"));
    }
  }
  bool suspect = false;
  *out.mutable_eval() =
      gpu ? evaluator_->Run(request, std::move(compiled), *gpu, &suspect)
          : evaluator_->Run(request, std::move(compiled), gpu::GpuInfo{}, &suspect);
  if (gpu) {
    if (suspect) CheckAfterFailure(*gpu);
    metrics_->GpuBusy(gpu->index, absl::Now() - acquired);
    pool_->Release(gpu->index);
  }
  return out;
}

}  // namespace ptxbench::worker
