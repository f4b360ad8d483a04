#ifndef PTXBENCH_SCHEDULER_STATE_FLEET_LIMITS_H_
#define PTXBENCH_SCHEDULER_STATE_FLEET_LIMITS_H_

// One rate limit per model across the fleet (docs/ARCHITECTURE.md, "One
// rate limit per model"): every gateway asks here for a permit before each
// call to a model's provider, so N gateways together stay within the
// model's rpm, tpm and concurrency, not N times them. One CallLimits
// (common/call_limits.h, exact sliding windows) per model.
//
// - The limits are the gateways' registries': each acquire carries the
//   asking gateway's, and the strictest of each field among the gateways
//   that asked within a permit TTL holds (a change is logged, with the
//   gateway that disagrees).
// - A permit is held by (the caller's token name, its executor id). It
//   expires `permit_ttl` after it was granted or last renewed: its
//   concurrency slot comes back, its start and reserved tokens stay counted
//   in their minute (the call may have reached the provider). So a gateway
//   that dies returns its share within a TTL and a sweep.
// - In memory only: a restarted scheduler starts with empty windows (its
//   gateways' renewals then name unknown permits, and say so in their logs).
// - Every input is checked: a clear error for each bad one, never a crash
//   or unbounded memory (models, permits and one call's tokens are bounded).
//
// Thread safety: every method may be called from any thread (the gRPC
// callback threads call it directly, off the writer thread: nothing here is
// durable). mu_ is taken before each model's CallLimits::mu_.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/call_limits.h"
#include "common/clock.h"

namespace ptxbench::scheduler {

class FleetLimits {
 public:
  struct Options {
    // A permit not renewed or released for this long expires (the lease TTL
    // by default: a gateway renews its permits as often as its leases).
    absl::Duration permit_ttl = absl::Seconds(30);
    // Bounds on hostile or broken callers.
    int64_t max_tokens = int64_t{1} << 40;  // one call's reservation or bill
    size_t max_models = 10'000;
    size_t max_model_bytes = 256;
    size_t max_permits = 1'000'000;  // held at once, all gateways
    size_t max_renew = 100'000;      // permits named in one renewal
  };
  // A permit's holder: the name of the caller's token and its executor id.
  struct Holder {
    std::string owner;
    std::string executor_id;
    bool operator<(const Holder& o) const {
      return std::tie(owner, executor_id) < std::tie(o.owner, o.executor_id);
    }
    bool operator==(const Holder& o) const {
      return owner == o.owner && executor_id == o.executor_id;
    }
  };
  struct Grant {
    uint64_t permit_id = 0;  // 0: not granted
    absl::Duration wait;     // not granted: ask again after this
  };

  // `clock` is not owned.
  FleetLimits(Options options, const Clock* clock);

  // A permit for one call of `model` reserving `tokens`, under the
  // strictest limits reported for it (`limits`, this holder's, among them).
  // kInvalidArgument for an empty executor id, an empty or over-long model,
  // tokens or limits out of range; kResourceExhausted past max_models or
  // max_permits.
  absl::StatusOr<Grant> Acquire(const Holder& holder, const std::string& model, int64_t tokens,
                                const RateLimits& limits);
  // Ends a permit's call; `billed` replaces its reservation (< 0: keep it).
  // kNotFound for an id never granted here, kFailedPrecondition for one no
  // longer held (released, expired), kPermissionDenied for another
  // holder's, kInvalidArgument for `billed` past max_tokens.
  absl::Status Release(const Holder& holder, uint64_t permit_id, int64_t billed);
  // Extends the holder's listed permits by a TTL; returns the ids that are
  // not the holder's permits now. kInvalidArgument past max_renew.
  absl::StatusOr<std::vector<uint64_t>> Renew(const Holder& holder,
                                              absl::Span<const uint64_t> permit_ids);
  // The holder said goodbye: its permits end now, their reservations kept.
  // Returns how many.
  int ReleaseAll(const Holder& holder);

  absl::Duration permit_ttl() const { return options_.permit_ttl; }
  // What holds for `model` now (all 0 for a model never asked for), and
  // its calls in flight.
  RateLimits Effective(const std::string& model) const;
  int InFlight(const std::string& model) const;

 private:
  struct Reported {
    RateLimits limits;
    absl::Time seen;
  };
  struct Model {
    std::unique_ptr<CallLimits> limits;
    std::map<Holder, Reported> reported;
  };
  struct Held {
    std::string model;
    Holder holder;
    CallLimits::Permit inner;
    absl::Time expires;
  };
  // Ends expired permits and forgets stale reports, at most once per sweep
  // interval.
  void SweepLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets the model's limits to the strictest reported; logs a change.
  void UpdateLimitsLocked(const std::string& name, Model& model)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EndLocked(uint64_t id, int64_t billed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const Clock* clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, Model> models_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, Held> held_ ABSL_GUARDED_BY(mu_);
  // Ids of this scheduler's permits are [first_id_, next_id_): a release of
  // an id below next_id_ is a second release or an expired permit, one of
  // any other id was never granted here (or before a restart).
  const uint64_t first_id_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_);
  absl::Time next_sweep_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STATE_FLEET_LIMITS_H_
