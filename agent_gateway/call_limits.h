#ifndef PTXBENCH_AGENT_GATEWAY_CALL_LIMITS_H_
#define PTXBENCH_AGENT_GATEWAY_CALL_LIMITS_H_

// The per-model limits of a gateway (ModelLimits): requests per minute as a
// token bucket (capacity rpm, refilled continuously) and calls in flight.
// A call takes a permit before it starts and returns it when it ends.
// Tokens per minute are not enforced yet.

#include <atomic>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent_gateway/model_registry.h"
#include "common/clock.h"

namespace ptxbench::agent_gateway {

class CallLimits {
 public:
  // `clock` is not owned (Clock::Real() in production).
  CallLimits(const ModelLimits& limits, const Clock* clock);

  // When a call may start now, takes a request token and a concurrency
  // slot and returns zero; otherwise returns how long to wait before asking
  // again (nothing taken).
  absl::Duration TryAcquire();
  // Blocks (sleeping) until TryAcquire succeeds or `cancelled` is set;
  // false when cancelled.
  bool Acquire(const std::atomic<bool>& cancelled);
  // Ends a call that Acquire/TryAcquire let start.
  void Release();

 private:
  const ModelLimits limits_;
  const Clock* clock_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time refilled_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_CALL_LIMITS_H_
