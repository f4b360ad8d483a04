#include "agent_gateway/models/call_permits.h"

#include <gtest/gtest.h>

#include <atomic>

namespace ptxbench::agent_gateway {
namespace {

TEST(LocalCallPermitsTest, EachModelHasItsOwnLimits) {
  FakeClock clock;
  LocalCallPermits permits({{"a", {/*rpm=*/1, 0, 0}}}, &clock);
  auto first = permits.TryAcquire("a", 0);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->granted);
  auto second = permits.TryAcquire("a", 0);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->granted);
  EXPECT_EQ(second->wait, absl::Minutes(1));
  // A model without limits: none.
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(permits.TryAcquire("b", 0)->granted);
}

TEST(CallPermitsTest, AcquireGivesUpWhenTold) {
  FakeClock clock;
  LocalCallPermits permits({{"a", {0, 0, /*concurrency=*/1}}}, &clock);
  ASSERT_TRUE(permits.Acquire("a", 0, [] { return false; }).ok());
  std::atomic<int> asked{0};
  absl::StatusOr<CallPermits::Permit> p = permits.Acquire("a", 0, [&asked] { return ++asked > 5; });
  EXPECT_EQ(p.status().code(), absl::StatusCode::kCancelled) << p.status();
}

// A scheduler out of reach grants nothing: the call waits, asking again
// after a growing backoff, and is never let through.
TEST(SchedulerCallPermitsTest, AnUnreachableSchedulerGrantsNothing) {
  SchedulerCallPermits::Options options;
  options.scheduler_address = "127.0.0.1:1";  // nothing listens on port 1
  options.executor_id = [] { return std::string("ex_1"); };
  options.rpc_timeout = absl::Milliseconds(500);
  options.initial_backoff = absl::Milliseconds(100);
  options.max_backoff = absl::Milliseconds(400);
  SchedulerCallPermits permits(options);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<CallPermits::Grant> g = permits.TryAcquire("m", 10);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_FALSE(g->granted);
    EXPECT_GT(g->wait, absl::ZeroDuration());
    EXPECT_LE(g->wait, absl::Milliseconds(400));
  }
}

TEST(SchedulerCallPermitsTest, NothingIsGrantedBeforeRegistrationNorAfterStop) {
  std::atomic<int> asked{0};
  SchedulerCallPermits::Options options;
  options.scheduler_address = "127.0.0.1:1";
  options.executor_id = [&asked] {
    ++asked;
    return std::string();
  };
  SchedulerCallPermits permits(options);
  absl::StatusOr<CallPermits::Grant> g = permits.TryAcquire("m", 10);
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->granted);
  EXPECT_EQ(asked.load(), 1);
  permits.Stop();
  g = permits.TryAcquire("m", 10);
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->granted);
  EXPECT_EQ(asked.load(), 1) << "its executor id is not asked for once stopped";
}

}  // namespace
}  // namespace ptxbench::agent_gateway
