#ifndef PTXBENCH_WORKER_CANDIDATE_UIDS_H_
#define PTXBENCH_WORKER_CANDIDATE_UIDS_H_

// The uids candidate hosts run as (docs/SECURITY.md): a range, one uid per
// evaluation in flight, so that no two evaluations of a node — on one GPU or
// two, of one worker's slots — ever share a uid: one cannot signal, trace or
// read the other's files even if it got out of its namespaces. Thread-safe.

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ptxbench::worker {

class CandidateUids {
 public:
  // The uids first .. first + count - 1 (count at least 1).
  CandidateUids(uint32_t first, int count);
  CandidateUids(const CandidateUids&) = delete;
  CandidateUids& operator=(const CandidateUids&) = delete;

  // One uid, the caller's until the lease ends.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    uint32_t uid() const { return uid_; }

   private:
    friend class CandidateUids;
    Lease(CandidateUids* owner, uint32_t uid) : owner_(owner), uid_(uid) {}
    CandidateUids* owner_;
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
  uint64_t busy_ ABSL_GUARDED_BY(mu_) = 0;  // bit i: first_ + i is leased
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_CANDIDATE_UIDS_H_
