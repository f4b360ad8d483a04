#ifndef PTXBENCH_SCHEDULER_STATE_METRICS_H_
#define PTXBENCH_SCHEDULER_STATE_METRICS_H_

// The scheduler's /metrics page (--metrics-listen; docs/OBSERVABILITY.md
// lists every metric). Counters are atomics the writer thread bumps as it
// works, so collecting them costs the scheduler nothing; gauges of live work
// are read on the writer thread in one op per scrape (Dispatcher::Gauges),
// trajectory counts on the read connection, file sizes from the file system.

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "common/prometheus.h"
#include "scheduler/store/transitions.h"

namespace ptxbench::scheduler {

inline constexpr int kTaskEventCount = static_cast<int>(TaskEvent::kResume) + 1;
inline constexpr int kTrajectoryEventCount = static_cast<int>(TrajectoryEvent::kRetryAgent) + 1;

// Written by the writer thread only; read from any thread.
struct SchedulerCounters {
  std::atomic<int64_t> leases_granted{0};
  std::atomic<int64_t> leases_expired{0};
  std::array<std::atomic<int64_t>, kTaskEventCount> task_transitions{};
  std::array<std::atomic<int64_t>, kTrajectoryEventCount> trajectory_transitions{};
};

// Live work as the writer thread sees it at one moment (Core::Gauges).
struct SchedulerGauges {
  // Ready tasks by (kind "llm"/"eval", route: the model of an LLM task, the
  // evaluation class of an eval task). Tasks waiting out a backoff are not
  // ready and not counted here.
  std::map<std::pair<std::string, std::string>, int64_t> ready;
  int64_t backoff = 0;  // queued tasks waiting out a retry backoff
  std::map<std::string, int64_t> leased;  // by kind
  // By (kind "worker"/"gateway", state "active"/"draining"/"stopped"/"lost").
  std::map<std::pair<std::string, std::string>, int64_t> executors;
};

// Everything one page shows.
struct SchedulerMetricsInput {
  const SchedulerCounters* counters = nullptr;
  SchedulerGauges gauges;
  // By ptxbench.v1.TrajectoryState name.
  std::map<std::string, int64_t> trajectories;
  prometheus::Histogram::Counts lease_wait;
  prometheus::Histogram::Counts commit;
  prometheus::Histogram::Counts sync;
  int64_t database_bytes = 0;
  int64_t wal_bytes = 0;
};

std::string RenderSchedulerMetrics(const SchedulerMetricsInput& in);

// The size of the database file and of its WAL beside it (0 when absent).
std::pair<int64_t, int64_t> DatabaseFileSizes(const std::string& db_path);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STATE_METRICS_H_
