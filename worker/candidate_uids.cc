#include "worker/candidate_uids.h"

#include <algorithm>
#include <utility>

namespace ptxbench::worker {

// At most 64 at once (a bit each): far more than the evaluations one node
// runs together.
CandidateUids::CandidateUids(uint32_t first, int count)
    : first_(first), count_(std::clamp(count, 1, 64)) {}

CandidateUids::Lease::Lease(Lease&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), uid_(other.uid_) {}

CandidateUids::Lease::~Lease() {
  if (owner_ != nullptr) owner_->Release(uid_);
}

int CandidateUids::FreeIndex() const {
  for (int i = 0; i < count_; ++i) {
    if ((busy_ & (uint64_t{1} << i)) == 0) return i;
  }
  return -1;
}

CandidateUids::Lease CandidateUids::Acquire() {
  absl::MutexLock lock(&mu_);
  const auto free = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return FreeIndex() >= 0; };
  mu_.Await(absl::Condition(&free));
  const int i = FreeIndex();
  busy_ |= uint64_t{1} << i;
  return Lease(this, first_ + static_cast<uint32_t>(i));
}

void CandidateUids::Release(uint32_t uid) {
  absl::MutexLock lock(&mu_);
  busy_ &= ~(uint64_t{1} << (uid - first_));
}

}  // namespace ptxbench::worker
