#include "agent_gateway/call_limits.h"

#include <gtest/gtest.h>

namespace ptxbench::agent_gateway {
namespace {

TEST(CallLimitsTest, RequestsPerMinuteNeverExceeded) {
  FakeClock clock;
  CallLimits limits({/*rpm=*/60, /*tpm=*/0, /*concurrency=*/0}, &clock);
  // A full bucket: 60 calls at once, then one per second.
  int started = 0;
  for (int i = 0; i < 100; ++i) {
    if (limits.TryAcquire() == absl::ZeroDuration()) ++started;
  }
  EXPECT_EQ(started, 60);
  absl::Duration wait = limits.TryAcquire();
  EXPECT_GT(wait, absl::ZeroDuration());
  EXPECT_LE(wait, absl::Seconds(1));
  clock.Advance(absl::Milliseconds(500));
  EXPECT_GT(limits.TryAcquire(), absl::ZeroDuration());
  clock.Advance(absl::Milliseconds(500));
  EXPECT_EQ(limits.TryAcquire(), absl::ZeroDuration());
  // Over any window of 10 minutes: at most 60 (burst) + 600 calls.
  int later = 0;
  for (int s = 0; s < 600; ++s) {
    clock.Advance(absl::Seconds(1));
    while (limits.TryAcquire() == absl::ZeroDuration()) ++later;
  }
  EXPECT_EQ(later, 600);
}

TEST(CallLimitsTest, ConcurrencyCapHoldsUntilRelease) {
  FakeClock clock;
  CallLimits limits({0, 0, /*concurrency=*/2}, &clock);
  EXPECT_EQ(limits.TryAcquire(), absl::ZeroDuration());
  EXPECT_EQ(limits.TryAcquire(), absl::ZeroDuration());
  EXPECT_GT(limits.TryAcquire(), absl::ZeroDuration());
  limits.Release();
  EXPECT_EQ(limits.TryAcquire(), absl::ZeroDuration());
  std::atomic<bool> cancelled{true};
  EXPECT_FALSE(limits.Acquire(cancelled));
}

TEST(CallLimitsTest, NoLimitsNeverWait) {
  FakeClock clock;
  CallLimits limits({}, &clock);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(limits.TryAcquire(), absl::ZeroDuration());
}

}  // namespace
}  // namespace ptxbench::agent_gateway
