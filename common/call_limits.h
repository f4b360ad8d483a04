#ifndef PTXBENCH_COMMON_CALL_LIMITS_H_
#define PTXBENCH_COMMON_CALL_LIMITS_H_

// A model's call limits (RateLimits: the registry's `limits`), as exact
// sliding windows: no 60-second window ever holds more than `rpm` call
// starts or more than `tpm` tokens, and no more than `concurrency` calls are
// in flight. (A token bucket of capacity rpm would allow up to 2 x rpm in
// some window.) The scheduler keeps one per model for the whole fleet
// (scheduler/state/fleet_limits.h); a gateway alone may keep its own
// (agent_gateway/models/call_permits.h, LocalCallPermits).
//
// Tokens are known only when a call ends, so a call reserves an estimate
// when it starts (its input estimate plus max_tokens) and Release() replaces
// the reservation with the tokens the provider billed. A single call larger
// than `tpm` starts alone, in an otherwise empty window, rather than never.

#include <cstdint>
#include <deque>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace ptxbench {

struct RateLimits {
  int rpm = 0;          // requests per minute; 0 = no limit
  int64_t tpm = 0;      // tokens per minute; 0 = no limit
  int concurrency = 0;  // calls in flight; 0 = no limit

  bool operator==(const RateLimits& o) const {
    return rpm == o.rpm && tpm == o.tpm && concurrency == o.concurrency;
  }
  bool operator!=(const RateLimits& o) const { return !(*this == o); }
};

class CallLimits {
 public:
  // What a call that started holds; give it back to Release().
  struct Permit {
    uint64_t id = 0;
  };

  // `clock` is not owned (Clock::Real() in production).
  CallLimits(const RateLimits& limits, const Clock* clock);

  // When a call reserving `tokens` may start now, records its start and
  // returns true; otherwise sets `*wait` to how long until it might (nothing
  // taken). Thread-safe.
  bool TryAcquire(int64_t tokens, Permit* permit, absl::Duration* wait);
  // Ends a call: its concurrency slot is freed and its reservation becomes
  // `used_tokens` (0 when the call failed before the provider billed it;
  // negative: the reservation stays, as for a call whose end nobody saw).
  // False, changing nothing, when `permit` is not in flight (released
  // already, or never granted).
  bool Release(const Permit& permit, int64_t used_tokens);
  // New limits from now; the starts and tokens already in the window and
  // the calls in flight count against them.
  void SetLimits(const RateLimits& limits);
  RateLimits limits() const;
  int in_flight() const;

 private:
  struct Start {
    absl::Time at;
    uint64_t id;
    int64_t tokens;
  };
  void Expire(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Clock* clock_;
  mutable absl::Mutex mu_;
  RateLimits limits_ ABSL_GUARDED_BY(mu_);
  std::deque<Start> window_ ABSL_GUARDED_BY(mu_);  // starts of the last minute
  int64_t window_tokens_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_set<uint64_t> in_flight_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_CALL_LIMITS_H_
