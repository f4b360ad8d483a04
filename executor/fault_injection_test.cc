#include "executor/fault_injection.h"

#include <algorithm>
#include <optional>
#include <string>

#include "gtest/gtest.h"

// Suite names start with "executor_" so that `ctest -R executor` selects them.
namespace ptxbench::executor {
namespace {

ptxbench::v1::Task Leased(int task, int lease) {
  ptxbench::v1::Task t;
  t.mutable_lease()->set_task_id("t" + std::to_string(task));
  t.mutable_lease()->set_lease_id("l" + std::to_string(lease));
  return t;
}

TEST(executor_fault_injection, RatesOfZeroAndOneNeverAndAlwaysHit) {
  int crashes = 0;
  FaultInjector never("salt", 1, {.failure_rate = 0, .crash_rate = 0, .crash = [&] { ++crashes; }});
  FaultInjector always("salt", 1, {.failure_rate = 1, .crash_rate = 1, .crash = [&] { ++crashes; }});
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(never.Fails(Leased(i, 0)));
    EXPECT_FALSE(never.CrashAfterLease(Leased(i, 0)).has_value());
    EXPECT_TRUE(always.Fails(Leased(i, 0)));
  }
  EXPECT_EQ(crashes, 0);
  std::optional<ptxbench::v1::CompleteRequest> crashed = always.CrashAfterLease(Leased(1, 0));
  EXPECT_EQ(crashes, 1);
  ASSERT_TRUE(crashed.has_value());
  EXPECT_EQ(crashed->failure().failure_class(), ptxbench::v1::INFRA);
  EXPECT_EQ(crashed->failure().message(), "simulated crash (--crash-rate)");
}

// Half the leases at a rate of one half; the same leases again with the same
// salt and seed; others with another salt, another seed, or a re-lease.
TEST(executor_fault_injection, DrawsAreReproduciblePerLeaseAndApartPerSaltAndSeed) {
  auto failing = [](const std::string& salt, uint64_t seed, int lease) {
    FaultInjector faults(salt, seed, {.failure_rate = 0.5});
    std::string pattern;
    for (int i = 0; i < 200; ++i) pattern += faults.Fails(Leased(i, lease)) ? '1' : '0';
    return pattern;
  };
  const std::string base = failing("ptxb-sim-worker", 3, 0);
  const int hits = static_cast<int>(std::count(base.begin(), base.end(), '1'));
  EXPECT_GT(hits, 60);
  EXPECT_LT(hits, 140);
  EXPECT_EQ(failing("ptxb-sim-worker", 3, 0), base);
  EXPECT_NE(failing("ptxb-sim-gateway", 3, 0), base);
  EXPECT_NE(failing("ptxb-sim-worker", 4, 0), base);
  EXPECT_NE(failing("ptxb-sim-worker", 3, 1), base);
}

// A task's crash and failure draws are apart: at rates of one half, some
// tasks crash without failing and some fail without crashing.
TEST(executor_fault_injection, CrashAndFailureDrawApart) {
  FaultInjector faults("salt", 7, {.failure_rate = 0.5, .crash_rate = 0.5, .crash = [] {}});
  int crash_only = 0, fail_only = 0;
  for (int i = 0; i < 200; ++i) {
    const bool crashed = faults.CrashAfterLease(Leased(i, 0)).has_value();
    const bool failed = faults.Fails(Leased(i, 0));
    crash_only += crashed && !failed;
    fail_only += failed && !crashed;
  }
  EXPECT_GT(crash_only, 20);
  EXPECT_GT(fail_only, 20);
}

}  // namespace
}  // namespace ptxbench::executor
