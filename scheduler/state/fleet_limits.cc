#include "scheduler/state/fleet_limits.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace ptxbench::scheduler {
namespace {

// The strictest of two values of one limit, where 0 means none.
template <typename T>
T Stricter(T a, T b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

std::string Describe(const RateLimits& l) {
  return absl::StrCat("rpm ", l.rpm, ", tpm ", l.tpm, ", concurrency ", l.concurrency);
}

}  // namespace

FleetLimits::FleetLimits(Options options, const Clock* clock)
    : options_(options),
      clock_(clock),
      // Ids of a scheduler started a second later begin 2^32 further on, so
      // a permit of an earlier run is unknown rather than someone else's.
      first_id_((static_cast<uint64_t>(absl::ToUnixSeconds(clock->Now())) << 32) + 1),
      next_id_(first_id_) {}

absl::StatusOr<FleetLimits::Grant> FleetLimits::Acquire(const Holder& holder,
                                                        const std::string& model, int64_t tokens,
                                                        const RateLimits& limits) {
  if (holder.executor_id.empty()) {
    return absl::InvalidArgumentError("a call permit needs the executor id it is held by");
  }
  if (model.empty() || model.size() > options_.max_model_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("a call permit's model must be 1 to ",
                                                   options_.max_model_bytes, " bytes, not ",
                                                   model.size()));
  }
  if (tokens < 0 || tokens > options_.max_tokens) {
    return absl::InvalidArgumentError(absl::StrCat("a call permit's tokens must be 0 to ",
                                                   options_.max_tokens, ", not ", tokens));
  }
  if (limits.rpm < 0 || limits.tpm < 0 || limits.concurrency < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("a model's limits cannot be negative (", Describe(limits), ")"));
  }
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  SweepLocked(now);
  auto it = models_.find(model);
  if (it == models_.end()) {
    if (models_.size() >= options_.max_models) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the scheduler holds the limits of ", models_.size(),
                       " models, its most; not of '", model, "'"));
    }
    it = models_.emplace(model, Model{std::make_unique<CallLimits>(limits, clock_), {}}).first;
  }
  Model& m = it->second;
  auto [report, fresh] = m.reported.try_emplace(holder, Reported{limits, now});
  const bool changed = fresh || report->second.limits != limits;
  report->second = {limits, now};
  if (changed) UpdateLimitsLocked(model, m);
  if (held_.size() >= options_.max_permits) {
    return absl::ResourceExhaustedError(
        absl::StrCat(held_.size(), " call permits are held, the scheduler's most"));
  }
  Grant grant;
  CallLimits::Permit inner;
  if (!m.limits->TryAcquire(tokens, &inner, &grant.wait)) return grant;
  grant.permit_id = next_id_++;
  held_[grant.permit_id] = {model, holder, inner, now + options_.permit_ttl};
  return grant;
}

absl::Status FleetLimits::Release(const Holder& holder, uint64_t permit_id, int64_t billed) {
  if (billed > options_.max_tokens) {
    return absl::InvalidArgumentError(absl::StrCat("permit ", permit_id, " billed ", billed,
                                                   " tokens, past the most a call may, ",
                                                   options_.max_tokens));
  }
  absl::MutexLock lock(&mu_);
  SweepLocked(clock_->Now());
  auto it = held_.find(permit_id);
  if (it == held_.end()) {
    if (permit_id >= first_id_ && permit_id < next_id_) {
      return absl::FailedPreconditionError(
          absl::StrCat("call permit ", permit_id,
                       " is no longer held: released already, or expired (not renewed for ",
                       absl::FormatDuration(options_.permit_ttl), ")"));
    }
    return absl::NotFoundError(absl::StrCat("no call permit ", permit_id,
                                            " was granted by this scheduler (one granted "
                                            "before it restarted is forgotten)"));
  }
  if (!(it->second.holder == holder)) {
    return absl::PermissionDeniedError(
        absl::StrCat("call permit ", permit_id, " is held by another executor"));
  }
  EndLocked(permit_id, billed);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint64_t>> FleetLimits::Renew(const Holder& holder,
                                                         absl::Span<const uint64_t> permit_ids) {
  if (permit_ids.size() > options_.max_renew) {
    return absl::InvalidArgumentError(absl::StrCat("a renewal names ", permit_ids.size(),
                                                   " permits, past the most, ",
                                                   options_.max_renew));
  }
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  SweepLocked(now);
  std::vector<uint64_t> unknown;
  for (uint64_t id : permit_ids) {
    auto it = held_.find(id);
    if (it == held_.end() || !(it->second.holder == holder)) {
      unknown.push_back(id);
      continue;
    }
    it->second.expires = now + options_.permit_ttl;
    if (auto m = models_.find(it->second.model); m != models_.end()) {
      if (auto r = m->second.reported.find(holder); r != m->second.reported.end()) {
        r->second.seen = now;  // a gateway in a long call still reports
      }
    }
  }
  return unknown;
}

int FleetLimits::ReleaseAll(const Holder& holder) {
  absl::MutexLock lock(&mu_);
  std::vector<uint64_t> ids;
  for (const auto& [id, held] : held_) {
    if (held.holder == holder) ids.push_back(id);
  }
  for (uint64_t id : ids) EndLocked(id, -1);
  return static_cast<int>(ids.size());
}

RateLimits FleetLimits::Effective(const std::string& model) const {
  absl::MutexLock lock(&mu_);
  auto it = models_.find(model);
  return it == models_.end() ? RateLimits{} : it->second.limits->limits();
}

int FleetLimits::InFlight(const std::string& model) const {
  absl::MutexLock lock(&mu_);
  auto it = models_.find(model);
  return it == models_.end() ? 0 : it->second.limits->in_flight();
}

void FleetLimits::SweepLocked(absl::Time now) {
  mu_.AssertHeld();
  if (now < next_sweep_) return;
  next_sweep_ = now + std::min(absl::Seconds(1), options_.permit_ttl / 4);
  std::vector<uint64_t> expired;
  for (const auto& [id, held] : held_) {
    if (held.expires <= now) expired.push_back(id);
  }
  for (uint64_t id : expired) {
    const Held& held = held_.at(id);
    LogWarning("call permit expired: its gateway neither renewed nor released it",
               {{"permit", std::to_string(id)},
                {"model", held.model},
                {"executor_id", held.holder.executor_id}});
    EndLocked(id, -1);
  }
  for (auto& [name, model] : models_) {
    bool dropped = false;
    for (auto r = model.reported.begin(); r != model.reported.end();) {
      if (r->second.seen + options_.permit_ttl <= now) {
        r = model.reported.erase(r);
        dropped = true;
      } else {
        ++r;
      }
    }
    // The limits stay as they were when the last gateway went quiet.
    if (dropped && !model.reported.empty()) UpdateLimitsLocked(name, model);
  }
}

void FleetLimits::UpdateLimitsLocked(const std::string& name, Model& model) {
  mu_.AssertHeld();
  RateLimits strictest;
  for (const auto& [holder, r] : model.reported) {
    strictest.rpm = Stricter(strictest.rpm, r.limits.rpm);
    strictest.tpm = Stricter(strictest.tpm, r.limits.tpm);
    strictest.concurrency = Stricter(strictest.concurrency, r.limits.concurrency);
  }
  const RateLimits before = model.limits->limits();
  if (strictest == before) return;
  model.limits->SetLimits(strictest);
  std::vector<std::string> disagree;
  for (const auto& [holder, r] : model.reported) {
    if (r.limits != strictest) {
      disagree.push_back(absl::StrCat(holder.executor_id, " (", Describe(r.limits), ")"));
    }
  }
  std::string others;
  for (const std::string& d : disagree) absl::StrAppend(&others, others.empty() ? "" : "; ", d);
  Log(disagree.empty() ? LogLevel::kInfo : LogLevel::kWarning,
      "a model's limits for the fleet changed: the strictest its gateways report hold",
      {{"model", name},
       {"before", Describe(before)},
       {"now", Describe(strictest)},
       {"gateways", std::to_string(model.reported.size())},
       {"less_strict", others}});
}

void FleetLimits::EndLocked(uint64_t id, int64_t billed) {
  mu_.AssertHeld();
  auto it = held_.find(id);
  if (it == held_.end()) return;
  if (auto m = models_.find(it->second.model); m != models_.end()) {
    m->second.limits->Release(it->second.inner, billed);
  }
  held_.erase(it);
}

}  // namespace ptxbench::scheduler
