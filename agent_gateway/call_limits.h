#ifndef PTXBENCH_AGENT_GATEWAY_CALL_LIMITS_H_
#define PTXBENCH_AGENT_GATEWAY_CALL_LIMITS_H_

// The per-model limits of a gateway (ModelLimits), as exact sliding windows:
// no 60-second window ever holds more than `rpm` call starts or more than
// `tpm` tokens, and no more than `concurrency` calls are in flight. (A token
// bucket of capacity rpm would allow up to 2 x rpm in some window.)
//
// Tokens are known only when a call ends, so a call reserves an estimate
// when it starts (its input estimate plus max_tokens) and Release() replaces
// the reservation with the tokens the provider billed. A single call larger
// than `tpm` starts alone, in an otherwise empty window, rather than never.

#include <cstdint>
#include <deque>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent_gateway/model_registry.h"
#include "common/clock.h"

namespace ptxbench::agent_gateway {

class CallLimits {
 public:
  // What a call that started holds; give it back to Release().
  struct Permit {
    uint64_t id = 0;
  };

  // `clock` is not owned (Clock::Real() in production).
  CallLimits(const ModelLimits& limits, const Clock* clock);

  // When a call reserving `tokens` may start now, records its start and
  // returns true; otherwise sets `*wait` to how long until it might (nothing
  // taken). Thread-safe.
  bool TryAcquire(int64_t tokens, Permit* permit, absl::Duration* wait);
  // Ends a call: its concurrency slot is freed and its reservation becomes
  // `used_tokens` (0 when the call failed before the provider billed it).
  void Release(const Permit& permit, int64_t used_tokens);

 private:
  struct Start {
    absl::Time at;
    uint64_t id;
    int64_t tokens;
  };
  void Expire(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ModelLimits limits_;
  const Clock* clock_;
  absl::Mutex mu_;
  std::deque<Start> window_ ABSL_GUARDED_BY(mu_);  // starts of the last minute
  int64_t window_tokens_ ABSL_GUARDED_BY(mu_) = 0;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_CALL_LIMITS_H_
