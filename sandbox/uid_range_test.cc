#include "sandbox/uid_range.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ptxbench::sandbox {
namespace {

TEST(UidRangeTest, SandboxesInFlightNeverShareAUid) {
  UidRange uids(65000, 3);
  std::set<uint32_t> held;
  {
    UidRange::Lease a = uids.Acquire();
    UidRange::Lease b = uids.Acquire();
    UidRange::Lease c = uids.Acquire();
    held = {a.uid(), b.uid(), c.uid()};
    EXPECT_EQ(held, (std::set<uint32_t>{65000, 65001, 65002}));
  }
  // All three came back: the range is whole again.
  UidRange::Lease again = uids.Acquire();
  EXPECT_EQ(again.uid(), 65000u);
}

TEST(UidRangeTest, ASandboxWaitsForAFreeUid) {
  UidRange uids(70000, 1);
  std::atomic<bool> got{false};
  std::thread waiter;
  {
    UidRange::Lease only = uids.Acquire();
    waiter = std::thread([&] {
      UidRange::Lease second = uids.Acquire();
      got = true;
      EXPECT_EQ(second.uid(), 70000u);
    });
    absl::SleepFor(absl::Milliseconds(100));
    EXPECT_FALSE(got) << "two sandboxes got the one uid at once";
  }
  waiter.join();
  EXPECT_TRUE(got);
}

// More than the 64 of the old bit mask: a gateway with 100 agent slots.
TEST(UidRangeTest, AWideRangeHandsOutEveryUid) {
  UidRange uids(80000, 100);
  std::vector<UidRange::Lease> leases;
  for (int i = 0; i < 100; ++i) leases.push_back(uids.Acquire());
  EXPECT_EQ(leases.back().uid(), 80099u);
}

class UidBlockTest : public ::testing::Test {
 protected:
  std::string lock_file_ = absl::StrCat(::testing::TempDir(), "/uid_block_test_", getpid());
  void TearDown() override { unlink(lock_file_.c_str()); }
};

// Two gateways on one machine never get a uid in common: the second's
// claim of an overlapping block is refused, and a free claim goes past.
TEST_F(UidBlockTest, TwoOwnersNeverShareAUid) {
  absl::StatusOr<UidBlock> a = UidBlock::Claim(90100, 4, lock_file_);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<UidBlock> overlapping = UidBlock::Claim(90103, 2, lock_file_);
  EXPECT_EQ(overlapping.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(overlapping.status().message(), "held by another process"))
      << overlapping.status();
  absl::StatusOr<UidBlock> next = UidBlock::ClaimFree(90100, 90200, 2, lock_file_);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->first(), 90104u);
  EXPECT_EQ(UidBlock::ClaimFree(90100, 90107, 2, lock_file_).status().code(),
            absl::StatusCode::kResourceExhausted);
  // Given back when its owner lets go of it (or dies: the kernel's lock).
  *a = std::move(*next);
  absl::StatusOr<UidBlock> again = UidBlock::ClaimFree(90100, 90200, 2, lock_file_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->first(), 90100u);
}

TEST_F(UidBlockTest, AnotherProcesssBlockIsRefusedUntilItDies) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t holder = fork();
  if (holder == 0) {
    absl::StatusOr<UidBlock> b = UidBlock::Claim(90300, 2, lock_file_);
    (void)!write(ready[1], b.ok() ? "y" : "n", 1);
    pause();
    _exit(0);
  }
  bool reaped = false;
  const absl::Cleanup end_holder = [&] {  // on every path: a paused child holds the output
    if (!reaped) {
      kill(holder, SIGKILL);
      waitpid(holder, nullptr, 0);
    }
  };
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  EXPECT_EQ(UidBlock::Claim(90301, 1, lock_file_).status().code(),
            absl::StatusCode::kFailedPrecondition);
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  reaped = true;
  EXPECT_TRUE(UidBlock::Claim(90301, 1, lock_file_).ok()) << "the dead holder's block";
}

// A sweep ends a block's processes (what a killed gateway's sessions left
// before their init died with it) and nothing else.
TEST(KillProcessesOfUidsTest, EndsTheBlocksProcessesOnly) {
  if (geteuid() != 0) GTEST_SKIP() << "processes of other uids need root";
  std::vector<pid_t> pids;
  for (uid_t uid : {61011u, 61012u, 61020u}) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) _exit(2);
      if (uid == 61012u) raise(SIGSTOP);  // a stopped one dies as well
      pause();
      _exit(0);
    }
    pids.push_back(pid);
  }
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(KillProcessesOfUids(61010, 5), 2);
  for (int i = 0; i < 2; ++i) {
    int status = 0;
    ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << i;
  }
  EXPECT_EQ(waitpid(pids[2], nullptr, WNOHANG), 0) << "a uid outside the block was killed";
  kill(pids[2], SIGKILL);
  waitpid(pids[2], nullptr, 0);
}

}  // namespace
}  // namespace ptxbench::sandbox
