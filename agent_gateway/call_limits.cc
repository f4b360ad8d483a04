#include "agent_gateway/call_limits.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace ptxbench::agent_gateway {

CallLimits::CallLimits(const ModelLimits& limits, const Clock* clock)
    : limits_(limits), clock_(clock), tokens_(limits.rpm), refilled_(clock->Now()) {}

absl::Duration CallLimits::TryAcquire() {
  absl::MutexLock lock(&mu_);
  if (limits_.concurrency > 0 && in_flight_ >= limits_.concurrency) {
    return absl::Milliseconds(20);  // a slot frees when some call ends
  }
  if (limits_.rpm > 0) {
    const absl::Time now = clock_->Now();
    const double per_second = limits_.rpm / 60.0;
    tokens_ = std::min<double>(limits_.rpm,
                               tokens_ + absl::ToDoubleSeconds(now - refilled_) * per_second);
    refilled_ = now;
    if (tokens_ < 1.0) return absl::Seconds((1.0 - tokens_) / per_second);
    tokens_ -= 1.0;
  }
  ++in_flight_;
  return absl::ZeroDuration();
}

bool CallLimits::Acquire(const std::atomic<bool>& cancelled) {
  while (!cancelled.load()) {
    const absl::Duration wait = TryAcquire();
    if (wait == absl::ZeroDuration()) return true;
    absl::SleepFor(std::min(wait, absl::Milliseconds(200)));
  }
  return false;
}

void CallLimits::Release() {
  absl::MutexLock lock(&mu_);
  --in_flight_;
}

}  // namespace ptxbench::agent_gateway
