#include "scheduler/state/metrics.h"

#include <filesystem>

#include "ptxbench/v1/common.pb.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;
using prometheus::Type;

namespace {

void Transitions(const SchedulerCounters& c, prometheus::Page& page) {
  page.Family("ptxbench_scheduler_transitions_total", Type::kCounter,
              "State transitions applied, by state machine and event (scheduler/store/transitions.cc)");
  for (int i = 0; i < kTrajectoryEventCount; ++i) {
    page.Sample({{"machine", "trajectory"},
                 {"event", TrajectoryEventName(static_cast<TrajectoryEvent>(i))}},
                static_cast<double>(c.trajectory_transitions[i].load()));
  }
  for (int i = 0; i < kTaskEventCount; ++i) {
    page.Sample({{"machine", "task"}, {"event", TaskEventName(static_cast<TaskEvent>(i))}},
                static_cast<double>(c.task_transitions[i].load()));
  }
}

void LiveWork(const SchedulerGauges& g, prometheus::Page& page) {
  page.Family("ptxbench_scheduler_queue_depth", Type::kGauge,
              "Tasks ready to lease, by kind and route (the model of an LLM task, the "
              "evaluation class of an eval task, cli@version of an agent session)");
  for (const auto& [key, n] : g.ready) {
    page.Sample({{"kind", key.first}, {"route", key.second}}, static_cast<double>(n));
  }
  page.Family("ptxbench_scheduler_backoff_tasks", Type::kGauge,
              "Queued tasks waiting out a retry backoff");
  page.Sample({}, static_cast<double>(g.backoff));
  page.Family("ptxbench_scheduler_leased_tasks", Type::kGauge, "Tasks leased now, by kind");
  for (const char* kind : {"llm", "eval", "agent"}) {
    auto it = g.leased.find(kind);
    page.Sample({{"kind", kind}}, it == g.leased.end() ? 0 : static_cast<double>(it->second));
  }
  page.Family("ptxbench_scheduler_executors", Type::kGauge,
              "Registered executors by kind and state (stopped: said goodbye; lost: not seen for "
              "three heartbeats past its longest poll)");
  for (const char* kind : {"worker", "gateway"}) {
    for (const char* state : {"active", "draining", "stopped", "lost"}) {
      auto it = g.executors.find({kind, state});
      page.Sample({{"kind", kind}, {"state", state}},
                  it == g.executors.end() ? 0 : static_cast<double>(it->second));
    }
  }
}

}  // namespace

std::string RenderSchedulerMetrics(const SchedulerMetricsInput& in) {
  prometheus::Page page;
  const SchedulerCounters& c = *in.counters;
  page.Family("ptxbench_scheduler_leases_granted_total", Type::kCounter,
              "Leases granted to executors");
  page.Sample({}, static_cast<double>(c.leases_granted.load()));
  page.Family("ptxbench_scheduler_leases_expired_total", Type::kCounter,
              "Leases that expired without a heartbeat (the task went back to the queue or "
              "was poisoned)");
  page.Sample({}, static_cast<double>(c.leases_expired.load()));
  page.Family("ptxbench_scheduler_lease_wait_seconds", Type::kHistogram,
              "From a Lease call's arrival, or a Complete's that asked for the next task, to "
              "its task being granted and committed (long-poll wait included; calls that end "
              "without a task are not counted)");
  page.Sample({}, in.lease_wait);
  page.Family("ptxbench_scheduler_commit_seconds", Type::kHistogram,
              "Duration of each batch transaction's COMMIT on the writer thread (its write "
              "of the WAL; the disk's sync is the next family)");
  page.Sample({}, in.commit);
  page.Family("ptxbench_scheduler_wal_sync_seconds", Type::kHistogram,
              "Duration of each sync of the WAL on the reply thread, which makes every batch "
              "committed before it durable before their replies go out");
  page.Sample({}, in.sync);
  Transitions(c, page);
  LiveWork(in.gauges, page);
  page.Family("ptxbench_scheduler_trajectories", Type::kGauge, "Trajectories by state");
  for (int s = v1::TrajectoryState_MIN + 1; s <= v1::TrajectoryState_MAX; ++s) {
    if (!v1::TrajectoryState_IsValid(s)) continue;
    const std::string name = v1::TrajectoryState_Name(static_cast<v1::TrajectoryState>(s));
    auto it = in.trajectories.find(name);
    page.Sample({{"state", name}},
                it == in.trajectories.end() ? 0 : static_cast<double>(it->second));
  }
  page.Family("ptxbench_scheduler_database_bytes", Type::kGauge,
              "Size of the SQLite database: the main file and its write-ahead log");
  page.Sample({{"file", "main"}}, static_cast<double>(in.database_bytes));
  page.Sample({{"file", "wal"}}, static_cast<double>(in.wal_bytes));
  return page.text();
}

std::pair<int64_t, int64_t> DatabaseFileSizes(const std::string& db_path) {
  auto size = [](const std::string& path) -> int64_t {
    std::error_code ec;
    const uintmax_t n = std::filesystem::file_size(path, ec);
    return ec ? 0 : static_cast<int64_t>(n);
  };
  return {size(db_path), size(db_path + "-wal")};
}

}  // namespace ptxbench::scheduler
