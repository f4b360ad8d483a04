#include "worker/worker_metrics.h"

#include "absl/strings/str_format.h"
#include "common/log.h"

namespace ptxbench::worker {

namespace v1 = ::ptxbench::v1;
using prometheus::Type;

WorkerMetrics::WorkerMetrics(std::vector<Gpu> gpus, sandbox::Protections protections,
                             const Clock* clock)
    : protections_(std::move(protections)), clock_(clock != nullptr ? clock : Clock::Real()) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  for (Gpu& g : gpus) {
    GpuTime& t = gpus_[g.index];
    t.model = std::move(g.model);
    t.since = now;
  }
  logged_ = gpus_;
}

std::map<int, WorkerMetrics::GpuTime> WorkerMetrics::Now() const {
  std::map<int, GpuTime> out = gpus_;
  const absl::Time now = clock_->Now();
  for (auto& [index, t] : out) {
    if (t.retired) continue;
    t.held_s += absl::ToDoubleSeconds(now - t.since);
    t.since = now;
  }
  return out;
}

void WorkerMetrics::Reported(const v1::CompleteRequest& report) {
  absl::MutexLock lock(&mu_);
  if (report.has_eval()) {
    evaluations_[report.eval().status()] += 1;
  } else {
    failure_reports_ += 1;
  }
}

void WorkerMetrics::GpuBusy(int gpu, absl::Duration d) {
  absl::MutexLock lock(&mu_);
  gpus_[gpu].busy_s += absl::ToDoubleSeconds(d);
}

void WorkerMetrics::GpuRetired(int gpu) {
  absl::MutexLock lock(&mu_);
  gpus_ = Now();
  gpus_[gpu].retired = true;
}

void WorkerMetrics::GpuTimedWork(int gpu, absl::Duration d) {
  absl::MutexLock lock(&mu_);
  gpus_[gpu].timed_s += absl::ToDoubleSeconds(d);
}

void WorkerMetrics::RunnerCrashed() {
  absl::MutexLock lock(&mu_);
  runner_crashes_ += 1;
}

namespace {

double DutyCycle(double held_s, double timed_s) { return held_s > 0 ? timed_s / held_s : 0; }

}  // namespace

std::string WorkerMetrics::Prometheus() const {
  absl::MutexLock lock(&mu_);
  prometheus::Page page;
  const std::map<int, GpuTime> gpus = Now();  // a copy: the analysis cannot see into lambdas
  auto per_gpu = [&](const char* name, Type type, const char* help,
                     double (*value)(const GpuTime&)) {
    page.Family(name, type, help);
    for (const auto& [index, t] : gpus) {
      page.Sample({{"gpu", std::to_string(index)}, {"model", t.model}}, value(t));
    }
  };
  per_gpu("ptxbench_worker_gpu_held_seconds_total", Type::kCounter,
          "Wall time the worker has held the GPU for evaluation (since its start, while in "
          "service)",
          [](const GpuTime& t) { return t.held_s; });
  per_gpu("ptxbench_worker_gpu_busy_seconds_total", Type::kCounter,
          "Time the GPU was reserved for an evaluation (acquired to released)",
          [](const GpuTime& t) { return t.busy_s; });
  per_gpu("ptxbench_worker_gpu_timed_work_seconds_total", Type::kCounter,
          "Wall time of the sandboxed runner processes on the GPU (checks and timed trials)",
          [](const GpuTime& t) { return t.timed_s; });
  per_gpu("ptxbench_worker_gpu_duty_cycle", Type::kGauge,
          "Timed work / held time since the worker started",
          [](const GpuTime& t) { return DutyCycle(t.held_s, t.timed_s); });
  page.Family("ptxbench_worker_evaluations_total", Type::kCounter,
              "Evaluations reported, by result status");
  for (int s = v1::EvalStatus_MIN + 1; s <= v1::EvalStatus_MAX; ++s) {
    if (!v1::EvalStatus_IsValid(s)) continue;
    const auto status = static_cast<v1::EvalStatus>(s);
    auto it = evaluations_.find(status);
    page.Sample({{"status", v1::EvalStatus_Name(status)}},
                it == evaluations_.end() ? 0 : static_cast<double>(it->second));
  }
  page.Family("ptxbench_worker_failure_reports_total", Type::kCounter,
              "Tasks reported as failed without an evaluation (infrastructure; retried)");
  page.Sample({}, static_cast<double>(failure_reports_));
  page.Family("ptxbench_worker_compile_seconds", Type::kHistogram,
              "Time to build a kernel for evaluation (cache hits included)");
  page.Sample({}, compile_seconds_.Read());
  page.Family("ptxbench_worker_runner_crashes_total", Type::kCounter,
              "Runner processes that died by a signal or were killed at their deadline");
  page.Sample({}, static_cast<double>(runner_crashes_));
  page.Family("ptxbench_worker_sandbox_protection", Type::kGauge,
              "1 for each sandbox protection active on this machine");
  for (const std::string& p : protections_.active) page.Sample({{"protection", p}}, 1);
  page.Family("ptxbench_worker_sandbox_warnings", Type::kGauge,
              "Sandbox protections missing on this machine (the worker's log names them)");
  page.Sample({}, static_cast<double>(protections_.warnings.size()));
  return page.text();
}

void WorkerMetrics::LogStats() {
  absl::MutexLock lock(&mu_);
  gpus_ = Now();
  for (const auto& [index, now] : gpus_) {
    const GpuTime& before = logged_[index];
    const double held = now.held_s - before.held_s, timed = now.timed_s - before.timed_s;
    Log(LogLevel::kInfo, "stats",
        {{"gpu", std::to_string(index)},
         {"model", now.model},
         {"held_s", absl::StrFormat("%.3f", held)},
         {"busy_s", absl::StrFormat("%.3f", now.busy_s - before.busy_s)},
         {"timed_work_s", absl::StrFormat("%.3f", timed)},
         {"duty_cycle", absl::StrFormat("%.4f", DutyCycle(held, timed))}});
  }
  logged_ = gpus_;
}

v1::CompleteRequest MeteredHandler::Run(const v1::Task& task, const std::atomic<bool>& cancelled) {
  v1::CompleteRequest report = inner_->Run(task, cancelled);
  if (!cancelled.load()) metrics_->Reported(report);
  return report;
}

}  // namespace ptxbench::worker
