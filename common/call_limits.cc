#include "common/call_limits.h"

#include <algorithm>

namespace ptxbench {
namespace {

constexpr absl::Duration kWindow = absl::Minutes(1);
// A concurrency slot frees when some call ends; look again soon.
constexpr absl::Duration kSlotPoll = absl::Milliseconds(20);

}  // namespace

CallLimits::CallLimits(const RateLimits& limits, const Clock* clock)
    : clock_(clock), limits_(limits) {}

void CallLimits::Expire(absl::Time now) {
  mu_.AssertHeld();
  while (!window_.empty() && window_.front().at + kWindow <= now) {
    window_tokens_ -= window_.front().tokens;
    window_.pop_front();
  }
}

bool CallLimits::TryAcquire(int64_t tokens, Permit* permit, absl::Duration* wait) {
  absl::MutexLock lock(&mu_);
  if (limits_.concurrency > 0 && static_cast<int64_t>(in_flight_.size()) >= limits_.concurrency) {
    *wait = kSlotPoll;
    return false;
  }
  const absl::Time now = clock_->Now();
  Expire(now);
  if (limits_.rpm > 0 && static_cast<int64_t>(window_.size()) >= limits_.rpm) {
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
  permit->id = next_id_++;
  // Every start is remembered, limits or not: limits set later
  // (SetLimits) count the starts of the minute before them.
  window_.push_back({now, permit->id, std::max<int64_t>(0, tokens)});
  window_tokens_ += window_.back().tokens;
  in_flight_.insert(permit->id);
  return true;
}

bool CallLimits::Release(const Permit& permit, int64_t used_tokens) {
  absl::MutexLock lock(&mu_);
  if (in_flight_.erase(permit.id) == 0) return false;
  if (used_tokens < 0) return true;
  for (auto it = window_.rbegin(); it != window_.rend(); ++it) {
    if (it->id != permit.id) continue;
    window_tokens_ += used_tokens - it->tokens;
    it->tokens = used_tokens;
    break;
  }
  return true;
}

void CallLimits::SetLimits(const RateLimits& limits) {
  absl::MutexLock lock(&mu_);
  limits_ = limits;
}

RateLimits CallLimits::limits() const {
  absl::MutexLock lock(&mu_);
  return limits_;
}

int CallLimits::in_flight() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(in_flight_.size());
}

}  // namespace ptxbench
