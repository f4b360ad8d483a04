#include "scheduler/state/fleet_limits.h"

#include <gtest/gtest.h>

#include <vector>

namespace ptxbench::scheduler {
namespace {

const FleetLimits::Holder kA{"gw-token", "ex_a"};
const FleetLimits::Holder kB{"gw-token", "ex_b"};

FleetLimits::Options Ttl(absl::Duration ttl) {
  FleetLimits::Options o;
  o.permit_ttl = ttl;
  return o;
}

TEST(FleetLimitsTest, GatewaysShareOneWindowPerModel) {
  FakeClock clock;
  FleetLimits fleet(FleetLimits::Options(), &clock);
  const RateLimits limits{/*rpm=*/4, 0, 0};
  int granted = 0;
  // Two gateways asking in turn get 4 starts between them, not 4 each.
  for (int i = 0; i < 10; ++i) {
    auto g = fleet.Acquire(i % 2 ? kA : kB, "m", 0, limits);
    ASSERT_TRUE(g.ok()) << g.status();
    if (g->permit_id != 0) {
      ++granted;
      ASSERT_TRUE(fleet.Release(i % 2 ? kA : kB, g->permit_id, 0).ok());
    } else {
      EXPECT_EQ(g->wait, absl::Minutes(1));
    }
  }
  EXPECT_EQ(granted, 4);
  // Another model has a window of its own.
  auto other = fleet.Acquire(kA, "other", 0, limits);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->permit_id, 0u);
  clock.Advance(absl::Minutes(1));
  auto again = fleet.Acquire(kB, "m", 0, limits);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->permit_id, 0u);
}

TEST(FleetLimitsTest, TheStrictestReportedLimitOfEachKindHolds) {
  FakeClock clock;
  FleetLimits fleet(Ttl(absl::Seconds(30)), &clock);
  ASSERT_TRUE(fleet.Acquire(kA, "m", 0, {100, 5000, 0}).ok());
  ASSERT_TRUE(fleet.Acquire(kB, "m", 0, {10, 0, 8}).ok());
  EXPECT_EQ(fleet.Effective("m"), (RateLimits{10, 5000, 8}));
  // B goes quiet (no acquire, no renewal) for a TTL: A's limits hold again.
  clock.Advance(absl::Seconds(31));
  ASSERT_TRUE(fleet.Acquire(kA, "m", 0, {100, 5000, 0}).ok());
  EXPECT_EQ(fleet.Effective("m"), (RateLimits{100, 5000, 0}));
}

TEST(FleetLimitsTest, ADeadGatewaysConcurrencyComesBackItsStartsStayCounted) {
  FakeClock clock;
  FleetLimits fleet(Ttl(absl::Seconds(30)), &clock);
  const RateLimits limits{/*rpm=*/3, 0, /*concurrency=*/2};
  auto a1 = fleet.Acquire(kA, "m", 0, limits);
  auto a2 = fleet.Acquire(kA, "m", 0, limits);
  ASSERT_TRUE(a1.ok() && a2.ok());
  ASSERT_NE(a1->permit_id, 0u);
  ASSERT_NE(a2->permit_id, 0u);
  auto b = fleet.Acquire(kB, "m", 0, limits);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->permit_id, 0u) << "concurrency 2 is held by A";
  // A renews one permit and then dies: the other expires a TTL after its
  // grant, the renewed one a TTL after its renewal.
  clock.Advance(absl::Seconds(20));
  auto unknown = fleet.Renew(kA, {a1->permit_id});
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown->empty());
  clock.Advance(absl::Seconds(11));
  b = fleet.Acquire(kB, "m", 0, limits);
  ASSERT_TRUE(b.ok());
  ASSERT_NE(b->permit_id, 0u) << "A's unrenewed slot came back";
  EXPECT_EQ(fleet.InFlight("m"), 2);
  ASSERT_TRUE(fleet.Release(kB, b->permit_id, 0).ok());
  // At 61 s the renewed permit has expired too (at 50 s), and A's two
  // starts have left the minute; B's at 31 s has not.
  clock.Advance(absl::Seconds(30));
  b = fleet.Acquire(kB, "m", 0, limits);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(b->permit_id, 0u);
  EXPECT_EQ(fleet.InFlight("m"), 1);
  // Its release now: the expired permit is refused as no longer held.
  absl::Status late = fleet.Release(kA, a1->permit_id, 0);
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition) << late;
}

TEST(FleetLimitsTest, AnExpiredPermitKeepsItsStartInTheMinute) {
  FakeClock clock;
  FleetLimits fleet(Ttl(absl::Seconds(5)), &clock);
  const RateLimits limits{/*rpm=*/1, 0, 0};
  auto a = fleet.Acquire(kA, "m", 0, limits);
  ASSERT_TRUE(a.ok());
  ASSERT_NE(a->permit_id, 0u);
  clock.Advance(absl::Seconds(10));  // A died; its permit expired
  auto b = fleet.Acquire(kB, "m", 0, limits);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->permit_id, 0u) << "the dead gateway's call reached the provider";
  EXPECT_EQ(b->wait, absl::Seconds(50));
}

TEST(FleetLimitsTest, TokensPerMinuteCountTheBill) {
  FakeClock clock;
  FleetLimits fleet(FleetLimits::Options(), &clock);
  const RateLimits limits{0, /*tpm=*/1000, 0};
  auto a = fleet.Acquire(kA, "m", 600, limits);
  ASSERT_TRUE(a.ok());
  ASSERT_NE(a->permit_id, 0u);
  auto b = fleet.Acquire(kB, "m", 600, limits);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->permit_id, 0u);
  ASSERT_TRUE(fleet.Release(kA, a->permit_id, 300).ok());
  b = fleet.Acquire(kB, "m", 600, limits);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(b->permit_id, 0u);
}

TEST(FleetLimitsTest, LeavingEndsTheHoldersPermitsAtOnce) {
  FakeClock clock;
  FleetLimits fleet(FleetLimits::Options(), &clock);
  const RateLimits limits{0, 0, /*concurrency=*/1};
  auto a = fleet.Acquire(kA, "m", 0, limits);
  ASSERT_TRUE(a.ok());
  ASSERT_NE(a->permit_id, 0u);
  EXPECT_EQ(fleet.ReleaseAll(kB), 0);
  EXPECT_EQ(fleet.ReleaseAll(kA), 1);
  auto b = fleet.Acquire(kB, "m", 0, limits);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(b->permit_id, 0u);
}

TEST(FleetLimitsTest, BadInputsGetAClearErrorAndChangeNothing) {
  FakeClock clock;
  FleetLimits::Options options;
  options.max_models = 2;
  options.max_permits = 3;
  options.max_renew = 4;
  FleetLimits fleet(options, &clock);
  const RateLimits none;
  auto code = [](const auto& s) { return s.status().code(); };
  EXPECT_EQ(code(fleet.Acquire(kA, "m", -1, none)), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(fleet.Acquire(kA, "m", int64_t{1} << 50, none)),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(fleet.Acquire(kA, "", 0, none)), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(fleet.Acquire(kA, std::string(300, 'm'), 0, none)),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(fleet.Acquire({"gw", ""}, "m", 0, none)), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(fleet.Acquire(kA, "m", 0, {-1, 0, 0})), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(fleet.Acquire(kA, "m", 0, {0, -5, 0})), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fleet.Effective("m"), RateLimits{}) << "a refused call made no model";

  auto a = fleet.Acquire(kA, "m", 10, none);
  ASSERT_TRUE(a.ok());
  ASSERT_NE(a->permit_id, 0u);
  EXPECT_EQ(fleet.Release(kB, a->permit_id, 0).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(fleet.Release({"other-token", "ex_a"}, a->permit_id, 0).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(fleet.Release(kA, a->permit_id, int64_t{1} << 50).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fleet.Release(kA, 7, 0).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fleet.Release(kA, a->permit_id + 1000, 0).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fleet.InFlight("m"), 1);
  EXPECT_TRUE(fleet.Release(kA, a->permit_id, 5).ok());
  EXPECT_EQ(fleet.Release(kA, a->permit_id, 5).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(fleet.InFlight("m"), 0) << "a double release freed nothing twice";

  // Another's permit is unknown to a renewal, and not renewed.
  auto b = fleet.Acquire(kB, "m", 0, none);
  ASSERT_TRUE(b.ok());
  auto unknown = fleet.Renew(kA, {b->permit_id, 99});
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(*unknown, (std::vector<uint64_t>{b->permit_id, 99}));
  EXPECT_EQ(code(fleet.Renew(kA, {1, 2, 3, 4, 5})), absl::StatusCode::kInvalidArgument);

  // Bounds: models, permits.
  ASSERT_TRUE(fleet.Acquire(kA, "m2", 0, none).ok());
  EXPECT_EQ(code(fleet.Acquire(kA, "m3", 0, none)), absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(fleet.Acquire(kA, "m2", 0, none).ok());  // the third permit held
  EXPECT_EQ(code(fleet.Acquire(kA, "m", 0, none)), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(fleet.InFlight("m"), 1);
}

TEST(FleetLimitsTest, APermitOfAnEarlierSchedulerIsUnknown) {
  FakeClock clock;
  FleetLimits before(FleetLimits::Options(), &clock);
  auto a = before.Acquire(kA, "m", 0, {});
  ASSERT_TRUE(a.ok());
  clock.Advance(absl::Seconds(3));
  FleetLimits after(FleetLimits::Options(), &clock);
  EXPECT_EQ(after.Release(kA, a->permit_id, 0).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ptxbench::scheduler
