#include "common/call_limits.h"

#include <gtest/gtest.h>

#include <deque>

namespace ptxbench {
namespace {

// Starts as many calls as the limits allow at each step of `step` for
// `span`, and returns the start times.
std::deque<absl::Time> StartGreedily(CallLimits& limits, FakeClock& clock, int64_t tokens,
                                     absl::Duration step, absl::Duration span) {
  std::deque<absl::Time> starts;
  const absl::Time end = clock.Now() + span;
  while (clock.Now() < end) {
    CallLimits::Permit permit;
    absl::Duration wait;
    while (limits.TryAcquire(tokens, &permit, &wait)) {
      starts.push_back(clock.Now());
      limits.Release(permit, tokens);
    }
    EXPECT_GT(wait, absl::ZeroDuration());
    clock.Advance(step);
  }
  return starts;
}

int MostInAnyMinute(const std::deque<absl::Time>& starts) {
  int most = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t j = i;
    while (j < starts.size() && starts[j] < starts[i] + absl::Minutes(1)) ++j;
    most = std::max(most, static_cast<int>(j - i));
  }
  return most;
}

TEST(CallLimitsTest, NoMinuteEverHoldsMoreThanRpmStarts) {
  FakeClock clock;
  CallLimits limits({/*rpm=*/60, /*tpm=*/0, /*concurrency=*/0}, &clock);
  std::deque<absl::Time> starts =
      StartGreedily(limits, clock, 0, absl::Milliseconds(250), absl::Minutes(10));
  EXPECT_EQ(MostInAnyMinute(starts), 60);
  // Greedy use of an exact window: 60 per minute, 600 in 10 minutes.
  EXPECT_EQ(starts.size(), 600u);
}

TEST(CallLimitsTest, WaitSaysWhenTheOldestStartLeavesTheWindow) {
  FakeClock clock;
  CallLimits limits({/*rpm=*/2, 0, 0}, &clock);
  CallLimits::Permit p;
  absl::Duration wait;
  ASSERT_TRUE(limits.TryAcquire(0, &p, &wait));
  clock.Advance(absl::Seconds(10));
  ASSERT_TRUE(limits.TryAcquire(0, &p, &wait));
  clock.Advance(absl::Seconds(5));
  ASSERT_FALSE(limits.TryAcquire(0, &p, &wait));
  EXPECT_EQ(wait, absl::Seconds(45));
  clock.Advance(wait);
  EXPECT_TRUE(limits.TryAcquire(0, &p, &wait));
}

TEST(CallLimitsTest, TokensPerMinuteCountTheBilledTokens) {
  FakeClock clock;
  CallLimits limits({0, /*tpm=*/1000, 0}, &clock);
  CallLimits::Permit a, b, c;
  absl::Duration wait;
  // Reserve 600 (estimate): a second call of 600 must wait...
  ASSERT_TRUE(limits.TryAcquire(600, &a, &wait));
  EXPECT_FALSE(limits.TryAcquire(600, &b, &wait));
  EXPECT_EQ(wait, absl::Minutes(1));
  // ...until the first is billed at 300: then it fits.
  limits.Release(a, 300);
  ASSERT_TRUE(limits.TryAcquire(600, &b, &wait));
  EXPECT_FALSE(limits.TryAcquire(200, &c, &wait));
  // A call larger than tpm runs alone once the window is empty.
  clock.Advance(absl::Minutes(1));
  EXPECT_TRUE(limits.TryAcquire(5000, &c, &wait));
  EXPECT_FALSE(limits.TryAcquire(1, &c, &wait));
  std::deque<absl::Time> starts =
      StartGreedily(limits, clock, 100, absl::Seconds(1), absl::Minutes(5));
  // 5000 billed at the start: nothing for a minute, then 10 calls a minute.
  EXPECT_EQ(starts.size(), 40u);
}

TEST(CallLimitsTest, ConcurrencyCapHoldsUntilRelease) {
  FakeClock clock;
  CallLimits limits({0, 0, /*concurrency=*/2}, &clock);
  CallLimits::Permit a, b, c;
  absl::Duration wait;
  EXPECT_TRUE(limits.TryAcquire(0, &a, &wait));
  EXPECT_TRUE(limits.TryAcquire(0, &b, &wait));
  EXPECT_FALSE(limits.TryAcquire(0, &c, &wait));
  limits.Release(a, 0);
  EXPECT_TRUE(limits.TryAcquire(0, &c, &wait));
}

TEST(CallLimitsTest, NoLimitsNeverWait) {
  FakeClock clock;
  CallLimits limits({}, &clock);
  CallLimits::Permit p;
  absl::Duration wait;
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(limits.TryAcquire(1000, &p, &wait));
}

TEST(CallLimitsTest, ReleaseOfAPermitNotInFlightChangesNothing) {
  FakeClock clock;
  CallLimits limits({0, 0, /*concurrency=*/1}, &clock);
  CallLimits::Permit a, b;
  absl::Duration wait;
  ASSERT_TRUE(limits.TryAcquire(0, &a, &wait));
  EXPECT_TRUE(limits.Release(a, 0));
  // A second release would otherwise free a slot some other call holds.
  ASSERT_TRUE(limits.TryAcquire(0, &b, &wait));
  EXPECT_FALSE(limits.Release(a, 0));
  EXPECT_FALSE(limits.Release({12345}, 0));
  EXPECT_EQ(limits.in_flight(), 1);
  EXPECT_FALSE(limits.TryAcquire(0, &a, &wait));
}

TEST(CallLimitsTest, ANegativeBillKeepsTheReservation) {
  FakeClock clock;
  CallLimits limits({0, /*tpm=*/1000, 0}, &clock);
  CallLimits::Permit a, b;
  absl::Duration wait;
  ASSERT_TRUE(limits.TryAcquire(800, &a, &wait));
  ASSERT_TRUE(limits.Release(a, -1));  // nobody saw its end: it still counts
  EXPECT_FALSE(limits.TryAcquire(300, &b, &wait));
}

TEST(CallLimitsTest, NewLimitsCountTheStartsAlreadyInTheWindow) {
  FakeClock clock;
  CallLimits limits({}, &clock);
  CallLimits::Permit p;
  absl::Duration wait;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(limits.TryAcquire(0, &p, &wait));
    limits.Release(p, 0);
    clock.Advance(absl::Seconds(10));
  }
  limits.SetLimits({/*rpm=*/3, 0, 0});
  EXPECT_EQ(limits.limits().rpm, 3);
  EXPECT_FALSE(limits.TryAcquire(0, &p, &wait));
  EXPECT_EQ(wait, absl::Seconds(30));  // the first start, at 0 s, leaves at 60 s
}

}  // namespace
}  // namespace ptxbench
