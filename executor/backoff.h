#ifndef PTXBENCH_EXECUTOR_BACKOFF_H_
#define PTXBENCH_EXECUTOR_BACKOFF_H_

// Exponential backoff with jitter, so executors that lost the scheduler at
// the same moment do not come back in lock step.

#include <algorithm>

#include "absl/random/random.h"
#include "absl/time/time.h"

namespace ptxbench::executor {

// Not thread-safe: one per retry loop.
class Backoff {
 public:
  Backoff(absl::Duration initial, absl::Duration max)
      : initial_(std::max(initial, absl::Milliseconds(1))),
        max_(std::max(max, initial_)),
        next_(initial_) {}

  // The next wait: uniform in [d/2, d], where d doubles per call up to max.
  absl::Duration Next() {
    absl::Duration d = next_;
    next_ = std::min(next_ * 2, max_);
    return d / 2 + absl::Uniform(gen_, 0.0, 1.0) * (d / 2);
  }

  void Reset() { next_ = initial_; }

 private:
  absl::Duration initial_;
  absl::Duration max_;
  absl::Duration next_;
  absl::BitGen gen_;
};

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_BACKOFF_H_
