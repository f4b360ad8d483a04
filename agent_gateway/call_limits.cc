#include "agent_gateway/call_limits.h"

#include <algorithm>

namespace ptxbench::agent_gateway {
namespace {

constexpr absl::Duration kWindow = absl::Minutes(1);
// A concurrency slot frees when some call ends; look again soon.
constexpr absl::Duration kSlotPoll = absl::Milliseconds(20);

}  // namespace

CallLimits::CallLimits(const ModelLimits& limits, const Clock* clock)
    : limits_(limits), clock_(clock) {}

void CallLimits::Expire(absl::Time now) {
  mu_.AssertHeld();
  while (!window_.empty() && window_.front().at + kWindow <= now) {
    window_tokens_ -= window_.front().tokens;
    window_.pop_front();
  }
}

bool CallLimits::TryAcquire(int64_t tokens, Permit* permit, absl::Duration* wait) {
  absl::MutexLock lock(&mu_);
  if (limits_.concurrency > 0 && in_flight_ >= limits_.concurrency) {
    *wait = kSlotPoll;
    return false;
  }
  const absl::Time now = clock_->Now();
  Expire(now);
  if (limits_.rpm > 0 && static_cast<int>(window_.size()) >= limits_.rpm) {
    // The (size - rpm + 1)-th oldest start must leave the window first.
    *wait = window_[window_.size() - limits_.rpm].at + kWindow - now;
    return false;
  }
  if (limits_.tpm > 0 && !window_.empty() && window_tokens_ + tokens > limits_.tpm) {
    // Wait until enough of the oldest starts have left the window.
    int64_t left = window_tokens_;
    for (const Start& s : window_) {
      left -= s.tokens;
      if (left + tokens <= limits_.tpm || left == 0) {
        *wait = s.at + kWindow - now;
        break;
      }
    }
    return false;
  }
  // Starts are remembered only when a window limit needs them.
  permit->id = next_id_++;
  if (limits_.rpm > 0 || limits_.tpm > 0) {
    window_.push_back({now, permit->id, std::max<int64_t>(0, tokens)});
    window_tokens_ += window_.back().tokens;
  }
  ++in_flight_;
  return true;
}

void CallLimits::Release(const Permit& permit, int64_t used_tokens) {
  absl::MutexLock lock(&mu_);
  --in_flight_;
  for (auto it = window_.rbegin(); it != window_.rend(); ++it) {
    if (it->id != permit.id) continue;
    window_tokens_ += std::max<int64_t>(0, used_tokens) - it->tokens;
    it->tokens = std::max<int64_t>(0, used_tokens);
    return;
  }
}

}  // namespace ptxbench::agent_gateway
