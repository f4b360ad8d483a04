#include "scheduler/state/lease_table.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"

namespace ptxbench::scheduler {

LeaseTable::LeaseTable() {
  absl::BitGen gen;
  salt_ = absl::Uniform<uint64_t>(gen);
}

std::string LeaseTable::NewLeaseId() {
  return absl::StrFormat("ls_%016x", salt_ ^ (++counter_ * 0x9e3779b97f4a7c15ULL));
}

void LeaseTable::Add(int64_t task, Lease lease) {
  if (lease.kind == StepKind::kLlm) ++inflight_[lease.route_key];
  if (lease.kind == StepKind::kAgent) ++sessions_[lease.experiment];
  deadlines_.push({lease.deadline, task});
  leases_[task] = std::move(lease);
}

std::optional<LeaseTable::Lease> LeaseTable::Remove(int64_t task) {
  auto it = leases_.find(task);
  if (it == leases_.end()) return std::nullopt;
  if (it->second.kind == StepKind::kLlm) {
    auto m = inflight_.find(it->second.route_key);
    if (m != inflight_.end() && --m->second <= 0) inflight_.erase(m);
  }
  if (it->second.kind == StepKind::kAgent) {
    auto m = sessions_.find(it->second.experiment);
    if (m != sessions_.end() && --m->second <= 0) sessions_.erase(m);
  }
  Lease lease = std::move(it->second);
  leases_.erase(it);
  return lease;
}

const LeaseTable::Lease* LeaseTable::Find(int64_t task) const {
  auto it = leases_.find(task);
  return it == leases_.end() ? nullptr : &it->second;
}

void LeaseTable::Extend(int64_t task, absl::Time deadline) {
  auto it = leases_.find(task);
  if (it == leases_.end()) return;
  it->second.deadline = std::min(deadline, it->second.attempt_limit);
  deadlines_.push({it->second.deadline, task});
}

std::optional<LeaseTable::Due> LeaseTable::PopDue(absl::Time now) {
  while (!deadlines_.empty() && deadlines_.top().first <= now) {
    const int64_t task = deadlines_.top().second;
    deadlines_.pop();
    auto it = leases_.find(task);
    if (it == leases_.end() || it->second.deadline > now) continue;  // ended or extended
    return Due{task, it->second.deadline >= it->second.attempt_limit};
  }
  return std::nullopt;
}

int LeaseTable::Sessions(int64_t experiment) const {
  auto it = sessions_.find(experiment);
  return it == sessions_.end() ? 0 : it->second;
}

int LeaseTable::InFlight(const std::string& route_key) const {
  auto it = inflight_.find(route_key);
  return it == inflight_.end() ? 0 : it->second;
}

}  // namespace ptxbench::scheduler
