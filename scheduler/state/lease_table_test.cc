#include "scheduler/state/lease_table.h"

#include <gtest/gtest.h>

namespace ptxbench::scheduler {
namespace {

LeaseTable::Lease LlmLease(absl::Time deadline, absl::Time limit) {
  LeaseTable::Lease l;
  l.lease_id = "ls_x";
  l.executor = "ex_1";
  l.kind = StepKind::kLlm;
  l.route_key = "model-a";
  l.deadline = deadline;
  l.attempt_limit = limit;
  return l;
}

TEST(LeaseTableTest, IdsAreUniqueAndInFlightCallsAreCountedPerRoute) {
  LeaseTable t;
  EXPECT_NE(t.NewLeaseId(), t.NewLeaseId());
  const absl::Time now = absl::FromUnixSeconds(1000);
  t.Add(1, LlmLease(now + absl::Seconds(10), now + absl::Minutes(5)));
  t.Add(2, LlmLease(now + absl::Seconds(10), now + absl::Minutes(5)));
  LeaseTable::Lease eval = LlmLease(now + absl::Seconds(10), now + absl::Minutes(5));
  eval.kind = StepKind::kEval;
  t.Add(3, eval);
  EXPECT_EQ(t.InFlight("model-a"), 2);  // the evaluation is not an LLM call
  ASSERT_TRUE(t.Remove(1).has_value());
  EXPECT_FALSE(t.Remove(1).has_value());
  EXPECT_EQ(t.InFlight("model-a"), 1);
  EXPECT_TRUE(t.Holds(2));
  EXPECT_FALSE(t.Holds(1));
  EXPECT_EQ(t.all().size(), 2u);
}

TEST(LeaseTableTest, DueLeasesComeAndExtendedOrEndedOnesDoNot) {
  LeaseTable t;
  const absl::Time now = absl::FromUnixSeconds(1000);
  t.Add(1, LlmLease(now + absl::Seconds(10), now + absl::Minutes(5)));
  t.Add(2, LlmLease(now + absl::Seconds(10), now + absl::Seconds(20)));
  t.Add(3, LlmLease(now + absl::Seconds(10), now + absl::Minutes(5)));
  EXPECT_FALSE(t.PopDue(now).has_value());
  t.Extend(1, now + absl::Seconds(30));
  t.Extend(2, now + absl::Seconds(30));  // capped at its attempt limit (20 s)
  EXPECT_EQ(t.Find(2)->deadline, now + absl::Seconds(20));
  t.Remove(3);
  // At 25 s: task 2 ran into its attempt limit; 1 was extended; 3 ended.
  std::optional<LeaseTable::Due> due = t.PopDue(now + absl::Seconds(25));
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->task, 2);
  EXPECT_TRUE(due->past_attempt_limit);
  t.Remove(due->task);  // as Core ends an expired lease
  EXPECT_FALSE(t.PopDue(now + absl::Seconds(25)).has_value());
  due = t.PopDue(now + absl::Seconds(31));
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->task, 1);
  EXPECT_FALSE(due->past_attempt_limit);
}

}  // namespace
}  // namespace ptxbench::scheduler
