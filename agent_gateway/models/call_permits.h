#ifndef PTXBENCH_AGENT_GATEWAY_MODELS_CALL_PERMITS_H_
#define PTXBENCH_AGENT_GATEWAY_MODELS_CALL_PERMITS_H_

// Where a gateway gets leave to call a model's provider, once per call: the
// multiturn loop's calls (provider_gateway.h) and agent mode's model proxy
// (agent/model_proxy.h) both ask here first, and never call without a
// permit. A real gateway asks the scheduler (SchedulerCallPermits), which
// holds each model's rpm, tpm and concurrency for the whole fleet
// (docs/ARCHITECTURE.md, "One rate limit per model"); LocalCallPermits
// keeps one gateway's limits to itself (tests).

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "auth/channel.h"
#include "common/call_limits.h"
#include "common/clock.h"
#include "executor/backoff.h"
#include "ptxbench/v1/executor.grpc.pb.h"

namespace ptxbench::agent_gateway {

class CallPermits {
 public:
  struct Permit {
    uint64_t id = 0;
  };
  struct Grant {
    bool granted = false;
    Permit permit;        // granted
    absl::Duration wait;  // not granted: ask again after this long
  };
  virtual ~CallPermits() = default;

  // A permit for one call of `model` reserving `tokens` (input estimate plus
  // max output), if the limits allow it now. An error only for a request no
  // retry can fix (the step fails with it); a scheduler out of reach is
  // "not granted, ask again after a backoff". Thread-safe; blocks at most an
  // RPC's deadline.
  virtual absl::StatusOr<Grant> TryAcquire(const std::string& model, int64_t tokens) = 0;
  // Ends a permit's call: `billed` tokens (input + output; 0 when nothing
  // was billed, < 0 unknown: the reservation stays). Thread-safe; never
  // blocks on the network.
  virtual void Release(const std::string& model, const Permit& permit, int64_t billed) = 0;

  // Asks until granted, sleeping as told; gives up (kCancelled) when
  // `give_up` says so, which it asks at least every 200 ms.
  absl::StatusOr<Permit> Acquire(const std::string& model, int64_t tokens,
                                 const std::function<bool()>& give_up);
};

// One gateway's own limits: a CallLimits per model (none for a model not
// listed).
class LocalCallPermits final : public CallPermits {
 public:
  // `clock` is not owned.
  LocalCallPermits(const std::map<std::string, RateLimits>& limits, const Clock* clock);
  absl::StatusOr<Grant> TryAcquire(const std::string& model, int64_t tokens) override;
  void Release(const std::string& model, const Permit& permit, int64_t billed) override;

 private:
  CallLimits* For(const std::string& model);
  const Clock* clock_;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<CallLimits>> limits_ ABSL_GUARDED_BY(mu_);
};

// The fleet's limits: each acquire is an AcquireCallPermit call to the
// scheduler carrying this gateway's registry limits for the model. Releases
// go out on a thread of their own (a call's end never waits for the
// network), which also renews the permits held (RenewCallPermits) a few
// times per permit TTL, so that those of a gateway that dies expire.
class SchedulerCallPermits final : public CallPermits {
 public:
  struct Options {
    std::string scheduler_address;
    auth::ChannelSecurity security;
    // The gateway's executor id (ExecutorRunner::executor_id); "" before it
    // registered, when nothing is granted.
    std::function<std::string()> executor_id;
    // This gateway's registry limits, by model name (0s for one not listed).
    std::map<std::string, RateLimits> limits;
    absl::Duration rpc_timeout = absl::Seconds(5);
    // While the scheduler is out of reach, ask again after a jittered,
    // doubling wait, as the executor's other calls do.
    absl::Duration initial_backoff = absl::Milliseconds(200);
    absl::Duration max_backoff = absl::Seconds(10);
  };
  explicit SchedulerCallPermits(Options options);
  ~SchedulerCallPermits() override;  // Stop()

  // Sends the releases still queued (best effort, a short deadline) and
  // stops: nothing is granted from now, and `executor_id` is not called
  // again (so whatever it reads may go). Idempotent.
  void Stop();

  absl::StatusOr<Grant> TryAcquire(const std::string& model, int64_t tokens) override;
  void Release(const std::string& model, const Permit& permit, int64_t billed) override;

 private:
  struct Pending {
    uint64_t id;
    int64_t billed;
    absl::Time queued;
  };
  void Loop();

  const Options options_;
  std::unique_ptr<ptxbench::v1::ExecutorService::Stub> stub_;
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::set<uint64_t> held_ ABSL_GUARDED_BY(mu_);
  std::deque<Pending> releases_ ABSL_GUARDED_BY(mu_);
  absl::Duration ttl_ ABSL_GUARDED_BY(mu_) = absl::Seconds(30);
  executor::Backoff backoff_ ABSL_GUARDED_BY(mu_);
  bool unreachable_ ABSL_GUARDED_BY(mu_) = false;  // logged once per outage
  std::thread loop_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_MODELS_CALL_PERMITS_H_
