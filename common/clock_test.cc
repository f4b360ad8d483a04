#include "common/clock.h"

#include "gtest/gtest.h"

namespace ptxbench {
namespace {

TEST(FakeClockTest, MovesOnlyWhenAdvanced) {
  FakeClock clock(absl::FromUnixSeconds(100));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(100));
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(105));
  clock.Set(absl::FromUnixSeconds(7));
  EXPECT_EQ(absl::ToUnixMillis(clock.Now()), 7000);
}

}  // namespace
}  // namespace ptxbench
