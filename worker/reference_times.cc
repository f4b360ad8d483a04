#include "worker/reference_times.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ptxbench::worker {

ReferenceTimes::ReferenceTimes(absl::Duration max_age, const Clock* clock)
    : max_age_(max_age), clock_(clock) {}

std::string ReferenceTimes::GpuKey(const gpu::GpuInfo& gpu) {
  return absl::StrCat(gpu.index, "\x1f", gpu.pci_bus_id, "\x1f", gpu.name);
}

std::string ReferenceTimes::Key(const gpu::GpuInfo& gpu, const runner::RunnerJob& job,
                                const runner::WorkloadSpec& workload) {
  // Every part separated by a byte no part holds, so no two keys run together.
  std::string key = absl::StrCat(GpuKey(gpu), "\x1f", static_cast<int>(job.reference), "\x1f",
                                 job.torch.python, "\x1f", job.trials, "/", job.warmup_calls, "/",
                                 job.timed_calls, "\x1f", workload.uuid, "\x1f");
  for (const auto& [axis, value] : workload.axes) absl::StrAppend(&key, axis, "=", value, ",");
  for (const runner::FixedInput& f : workload.fixed) {
    absl::StrAppend(&key, "\x1f", f.name, "\x1e", f.scalar_json, "\x1e", f.path, "\x1e",
                    f.tensor_key);
  }
  // Last: the definition's whole text (its tolerance and reference code).
  absl::StrAppend(&key, "\x1f", job.definition_json);
  return key;
}

std::vector<runner::KnownReference> ReferenceTimes::Lookup(const gpu::GpuInfo& gpu,
                                                           const runner::RunnerJob& job) const {
  std::vector<runner::KnownReference> known;
  if (max_age_ <= absl::ZeroDuration()) return known;
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  std::vector<const Entry*> fresh;
  for (const runner::WorkloadSpec& w : job.workloads) {
    auto it = entries_.find(Key(gpu, job, w));
    if (it != entries_.end() && now - it->second.measured <= max_age_) fresh.push_back(&it->second);
  }
  if (!fresh.empty() && fresh.size() == job.workloads.size()) {
    // The oldest is timed again: every run checks the GPU for drift.
    fresh.erase(std::min_element(fresh.begin(), fresh.end(), [](const Entry* a, const Entry* b) {
      return a->measured < b->measured;
    }));
  }
  for (const Entry* e : fresh) {
    runner::KnownReference k = e->reference;
    k.log = absl::StrFormat(
        "reference figure measured by an earlier evaluation on this GPU %.0f s ago (%s), "
        "reused until %.0f s old:\n%s",
        absl::ToDoubleSeconds(now - e->measured),
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", e->measured, absl::UTCTimeZone()),
        absl::ToDoubleSeconds(max_age_), k.log);
    known.push_back(std::move(k));
  }
  return known;
}

std::string ReferenceTimes::Store(const gpu::GpuInfo& gpu, const runner::RunnerJob& job,
                                  const std::vector<runner::KnownReference>& timed) {
  if (max_age_ <= absl::ZeroDuration()) return "";
  const absl::Time now = clock_->Now();
  const std::string gpu_key = GpuKey(gpu);
  absl::MutexLock lock(&mu_);
  // Expired figures go first, so the map holds only what may still be used.
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = now - it->second.measured > max_age_ ? entries_.erase(it) : std::next(it);
  }
  std::string drift;
  for (const runner::KnownReference& k : timed) {
    for (const runner::WorkloadSpec& w : job.workloads) {
      if (w.uuid != k.workload_uuid) continue;
      const std::string key = Key(gpu, job, w);
      if (auto it = entries_.find(key); it != entries_.end() && drift.empty()) {
        const double was = it->second.reference.ms;
        if (std::abs(k.ms - was) > kDriftLimit * was) {
          drift = absl::StrFormat(
              "workload %s: the reference read %.4f ms against %.4f ms %.0f s before", w.uuid,
              k.ms, was, absl::ToDoubleSeconds(now - it->second.measured));
        }
      }
      entries_[key] = {k, now, gpu_key};
    }
  }
  if (!drift.empty()) {
    // Only this run's own figures stay: they are the GPU's state now.
    for (auto it = entries_.begin(); it != entries_.end();) {
      it = it->second.gpu == gpu_key && it->second.measured != now ? entries_.erase(it)
                                                                   : std::next(it);
    }
  }
  return drift;
}

}  // namespace ptxbench::worker
