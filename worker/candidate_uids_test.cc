#include "worker/candidate_uids.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "absl/time/clock.h"

namespace ptxbench::worker {
namespace {

TEST(CandidateUidsTest, EvaluationsInFlightNeverShareAUid) {
  CandidateUids uids(65000, 3);
  std::set<uint32_t> held;
  {
    CandidateUids::Lease a = uids.Acquire();
    CandidateUids::Lease b = uids.Acquire();
    CandidateUids::Lease c = uids.Acquire();
    held = {a.uid(), b.uid(), c.uid()};
    EXPECT_EQ(held, (std::set<uint32_t>{65000, 65001, 65002}));
  }
  // All three came back: the range is whole again.
  CandidateUids::Lease again = uids.Acquire();
  EXPECT_EQ(again.uid(), 65000u);
}

TEST(CandidateUidsTest, AnEvaluationWaitsForAFreeUid) {
  CandidateUids uids(70000, 1);
  std::atomic<bool> got{false};
  std::thread waiter;
  {
    CandidateUids::Lease only = uids.Acquire();
    waiter = std::thread([&] {
      CandidateUids::Lease second = uids.Acquire();
      got = true;
      EXPECT_EQ(second.uid(), 70000u);
    });
    absl::SleepFor(absl::Milliseconds(100));
    EXPECT_FALSE(got) << "two evaluations got the one uid at once";
  }
  waiter.join();
  EXPECT_TRUE(got);
}

}  // namespace
}  // namespace ptxbench::worker
