#include "scheduler/state/fair_queue.h"

#include <map>

#include "gtest/gtest.h"

namespace ptxbench::scheduler {
namespace {

auto AcceptAll = [](const std::string&) { return true; };

TEST(FairQueueTest, SharesByPriority) {
  FairQueue q;
  q.SetWeight(1, 1);
  q.SetWeight(2, 3);
  for (int i = 0; i < 1000; ++i) {
    q.Push(1, "m", i);
    q.Push(2, "m", 10000 + i);
  }
  std::map<int64_t, int> served;
  for (int i = 0; i < 400; ++i) ++served[q.Pop(AcceptAll)->experiment];
  EXPECT_EQ(served[1], 100);
  EXPECT_EQ(served[2], 300);
}

TEST(FairQueueTest, NewSmallExperimentIsServedAtOnceButGetsNoBurst) {
  FairQueue q;
  for (int i = 0; i < 10000; ++i) q.Push(1, "m", i);
  for (int i = 0; i < 5000; ++i) q.Pop(AcceptAll);
  for (int i = 0; i < 10; ++i) q.Push(2, "m", 100000 + i);
  std::map<int64_t, int> served;
  for (int i = 0; i < 20; ++i) ++served[q.Pop(AcceptAll)->experiment];
  // Equal weights: the newcomer alternates with the big one instead of
  // being starved behind 5000 tasks, or taking all 20 slots.
  EXPECT_EQ(served[2], 10);
  EXPECT_EQ(served[1], 10);
}

TEST(FairQueueTest, FifoWithinAnExperimentAndKeysFiltered) {
  FairQueue q;
  q.Push(1, "a", 1);
  q.Push(1, "b", 2);
  q.Push(1, "a", 3);
  auto only_a = [](const std::string& k) { return k == "a"; };
  EXPECT_EQ(q.Pop(only_a)->task, 1);
  EXPECT_EQ(q.Pop(only_a)->task, 3);
  EXPECT_FALSE(q.Pop(only_a).has_value());
  EXPECT_EQ(q.size(), 1);
  q.RemoveExperiment(1);
  EXPECT_EQ(q.size(), 0);
  EXPECT_FALSE(q.Pop(AcceptAll).has_value());
}

}  // namespace
}  // namespace ptxbench::scheduler
