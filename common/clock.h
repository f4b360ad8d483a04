#ifndef PTXBENCH_COMMON_CLOCK_H_
#define PTXBENCH_COMMON_CLOCK_H_

// Time sits behind an interface so that lease expiry, backoff and timeouts are
// tested by advancing a FakeClock instead of sleeping.

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ptxbench {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  // The process-wide real clock. Never null, never destroyed.
  static Clock* Real();
};

// A clock that moves only when told to. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000))
      : now_(start) {}
  absl::Time Now() const override;
  void Advance(absl::Duration d);
  void Set(absl::Time t);

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_CLOCK_H_
