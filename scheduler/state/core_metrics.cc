// Core: the live-work gauges of the scheduler's /metrics page.
#include "scheduler/state/core.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

SchedulerGauges Core::Gauges() const {
  AssertOnWriterThread();
  SchedulerGauges g;
  for (const auto& [key, n] : llm_ready_.SizeByKey()) g.ready[{"llm", key}] = n;
  for (const auto& [key, n] : eval_ready_.SizeByKey()) g.ready[{"eval", key}] = n;
  for (const auto& [key, n] : agent_ready_.SizeByKey()) g.ready[{"agent", key}] = n;
  // delayed_refs_ holds exactly the queued tasks in backoff (an entry of
  // delayed_ may be stale: cancelled tasks leave theirs behind).
  g.backoff = static_cast<int64_t>(delayed_refs_.size());
  for (const auto& [task, lease] : leases_.all()) {
    g.leased[StepKindName(lease.kind)] += 1;
  }
  const absl::Time now = clock_->Now();
  for (const auto& [id, e] : executors_.all()) {
    const char* kind = e.info.kind() == v1::GATEWAY ? "gateway" : "worker";
    g.executors[{kind, executors_.Status(e, now)}] += 1;
  }
  return g;
}

}  // namespace ptxbench::scheduler
