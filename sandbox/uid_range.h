#ifndef PTXBENCH_SANDBOX_UID_RANGE_H_
#define PTXBENCH_SANDBOX_UID_RANGE_H_

// The uids sandboxes run as when their owner is root (docs/SECURITY.md), for
// sandboxes that must never share one: a worker's candidate hosts (one per
// evaluation in flight) and a gateway's agent sessions (one per session).
// Two sandboxes of different uids cannot signal, trace or read each other
// even out of their namespaces, and the kernel's per-uid limits (inotify
// instances, pipe buffers, RLIMIT_NPROC) are theirs alone: two sessions on
// one uid, one holding 126 inotify instances made the other's inotify_init
// fail.
//
//  - UidRange hands out the uids of a range inside one process, a lease
//    each (thread-safe);
//  - UidBlock claims a range on the machine, so that no other process that
//    claims through the same lock file (another gateway) gets any of it
//    while this one lives;
//  - KillProcessesOfUids ends what runs as a range's uids (what an earlier
//    owner of the block left).

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ptxbench::sandbox {

class UidRange {
 public:
  // The uids first .. first + count - 1 (count at least 1, at most 65536).
  UidRange(uint32_t first, int count);
  UidRange(const UidRange&) = delete;
  UidRange& operator=(const UidRange&) = delete;

  uint32_t first() const { return first_; }
  int count() const { return count_; }

  // One uid, the caller's until the lease ends.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    uint32_t uid() const { return uid_; }

   private:
    friend class UidRange;
    Lease(UidRange* owner, uint32_t uid) : owner_(owner), uid_(uid) {}
    UidRange* owner_;
    uint32_t uid_;
  };
  // Waits until a uid of the range is free.
  Lease Acquire();

 private:
  void Release(uint32_t uid);
  // The first uid of the range not leased; -1 when all are.
  int FreeIndex() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const uint32_t first_;
  const int count_;
  absl::Mutex mu_;
  std::vector<bool> busy_ ABSL_GUARDED_BY(mu_);  // [i]: first_ + i is leased
};

// Where the blocks of uids of the machine are claimed: an open file
// description's lock (F_OFD_SETLK) on the bytes [first, first + count) of
// this file, which the kernel releases when the process ends, however it
// ends. /run is root's and emptied at boot.
inline constexpr char kUidLockFile[] = "/run/ptxbench-uids.lock";

class UidBlock {
 public:
  // Claims the uids [first, first + count). kFailedPrecondition when another
  // process holds any of them, or one belongs to an account (its name said:
  // a sweep of the block would end that account's processes); kInternal
  // when the lock file cannot be opened.
  static absl::StatusOr<UidBlock> Claim(uint32_t first, int count,
                                        const std::string& lock_file = kUidLockFile);
  // The lowest block of `count` uids in [from, to) that Claim would take.
  // kResourceExhausted when there is none.
  static absl::StatusOr<UidBlock> ClaimFree(uint32_t from, uint32_t to, int count,
                                            const std::string& lock_file = kUidLockFile);
  UidBlock(UidBlock&& other) noexcept;
  UidBlock& operator=(UidBlock&& other) noexcept;
  UidBlock(const UidBlock&) = delete;
  UidBlock& operator=(const UidBlock&) = delete;
  ~UidBlock();  // gives the block back

  uint32_t first() const { return first_; }
  int count() const { return count_; }

 private:
  UidBlock(int fd, uint32_t first, int count) : fd_(fd), first_(first), count_(count) {}
  int fd_ = -1;
  uint32_t first_ = 0;
  int count_ = 0;
};

// Sends SIGKILL to every process with a uid (real, effective, saved or
// filesystem) in [first, first + count), again until a pass finds none or
// 5 s passed (a process may fork while it is swept). Returns how many it
// killed. Only for a block this process claimed.
int KillProcessesOfUids(uint32_t first, int count);

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_UID_RANGE_H_
