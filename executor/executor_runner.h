#ifndef PTXBENCH_EXECUTOR_EXECUTOR_RUNNER_H_
#define PTXBENCH_EXECUTOR_EXECUTOR_RUNNER_H_

// The executor side of the lease protocol (docs/ARCHITECTURE.md, "Leasing and
// recovery"), shared by workers and gateways: register, long-poll for leases,
// heartbeat held leases, report fenced completions, survive scheduler restarts,
// drain on request.

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "auth/channel.h"
#include "executor/task_handler.h"
#include "grpcpp/client_context.h"
#include "ptxbench/v1/executor.grpc.pb.h"

namespace ptxbench::executor {

// Runs lease loops against one scheduler until drained or stopped: `slots`
// loops that each run a TaskHandler's task in turn, or, for an
// AsyncTaskHandler, `lease_threads` loops that keep up to `slots` tasks
// started and hand finished ones to `report_threads` reporters.
//
// Guarantees: a result is reported with the (task_id, lease_id) it was leased
// under; a report that fails UNAVAILABLE/DEADLINE_EXCEEDED/ABORTED is kept and
// retried with backoff until accepted, rejected (FAILED_PRECONDITION: the
// lease is no longer current, the result is dropped) or the lease is revoked;
// a report refused for any other reason is sent once more in its minimal
// form (report_repair.h: the outcome's class, reason and totals, no
// records), so it is never dropped unheard; every `string` field of a
// report is made valid UTF-8 first, so none fails to parse at the scheduler;
// a revoked lease's work is cancelled and never reported. When Run() ends
// after registering, it says goodbye (Leave), so that nothing stays leased
// to it until expiry.
//
// Thread safety: Run() is called once, from one thread; Stop() and
// executor_id() from any thread (not from a signal handler).
class ExecutorRunner {
 public:
  struct Options {
    std::string scheduler_address;
    // The token every call carries and the channel's TLS (auth/channel.h).
    auth::ChannelSecurity security;
    ptxbench::v1::ExecutorKind kind = ptxbench::v1::EXECUTOR_KIND_UNSPECIFIED;
    std::string name;
    // capabilities.slots is overwritten with `slots`.
    ptxbench::v1::Capabilities capabilities;
    int slots = 1;
    // Long-poll wait asked of the scheduler; each poll uses 75-100% of it.
    absl::Duration lease_wait = absl::Seconds(20);
    // Retries (Register, Lease, Complete) wait a jittered, doubling backoff
    // from `initial_backoff` up to `max_backoff`.
    absl::Duration initial_backoff = absl::Milliseconds(200);
    absl::Duration max_backoff = absl::Seconds(10);
    // Deadline of Register, Heartbeat and Complete calls.
    absl::Duration rpc_timeout = absl::Seconds(10);
    // Executor build version sent at registration; empty: the project version.
    std::string version;
    // AsyncTaskHandler only: lease long-polls and report calls at once
    // (0: one per 32 slots, at least 2 and at most `slots`). Each is a
    // blocking RPC whose latency is mostly the scheduler's commit, so
    // throughput needs several in flight, not one per task.
    int lease_threads = 0;
    int report_threads = 0;
    // The kinds of task it asks for (LeaseRequest.kinds); empty: any it runs.
    std::vector<ptxbench::v1::TaskKind> lease_kinds;
  };

  // `handler` is not owned and must outlive Run().
  ExecutorRunner(Options options, TaskHandler* handler);
  ExecutorRunner(Options options, AsyncTaskHandler* handler);
  ~ExecutorRunner();
  ExecutorRunner(const ExecutorRunner&) = delete;
  ExecutorRunner& operator=(const ExecutorRunner&) = delete;

  // Blocks until drained (drain flag seen and no task held) or Stop().
  // Returns OK then; the scheduler's error when registration is refused for
  // a reason retrying cannot fix (e.g. PERMISSION_DENIED, INVALID_ARGUMENT);
  // FAILED_PRECONDITION when called twice.
  absl::Status Run();

  // Stops leasing, cancels running tasks (their handlers see `cancelled`; the
  // scheduler gets a best-effort INFRA failure so it re-queues them without
  // waiting for lease expiry), abandons unaccepted reports, and makes Run()
  // return. Idempotent; may be called before Run().
  void Stop();

  // Stops leasing and lets the tasks held now finish and be reported; Run()
  // returns once none is left. Stop() still cuts it short. Idempotent.
  void Drain() { SetDraining("local"); }

  // The id the scheduler assigned; empty before registration.
  std::string executor_id() const;

 private:
  struct HeldTask {
    ptxbench::v1::LeaseRef lease;
    std::atomic<bool> cancelled{false};
    std::atomic<bool> revoked{false};
  };

  // A client context tracked so that Stop() (and drain, for polls) can
  // cancel the call it is used for.
  class TrackedContext;

  // Registers (again, keeping the executor id) unless another thread already
  // did after registration generation `seen_generation`. Retries transient
  // errors with backoff until stopped.
  absl::Status Register(int64_t seen_generation);
  void LeaseLoop(int slot);
  // The lease is held (heartbeated) from HoldTask to FinishTask, which
  // reports the outcome unless the lease was revoked or the task cancelled.
  // The report asks for the next task in the same call (CompleteRequest.next)
  // unless the runner is draining or stopping; FinishTask returns it, for
  // the room the finished task leaves.
  std::shared_ptr<HeldTask> HoldTask(const ptxbench::v1::Task& task);
  std::optional<ptxbench::v1::Task> FinishTask(ptxbench::v1::CompleteRequest request,
                                               const std::shared_ptr<HeldTask>& held);
  // Runs `task`, then each next task its report brought.
  void RunTask(const ptxbench::v1::Task& task);
  void StartTask(const ptxbench::v1::Task& task);
  void ReportLoop();
  std::optional<ptxbench::v1::Task> ReportComplete(ptxbench::v1::CompleteRequest request,
                                                   const std::shared_ptr<HeldTask>& held);
  void ReportAbandoned(const ptxbench::v1::LeaseRef& lease);
  // Says goodbye (ExecutorService.Leave) when Run ends: the scheduler
  // re-queues any lease still recorded for this executor. A drain cancels
  // the polls in flight, and one whose lease was granted as it was cancelled
  // would otherwise wait for lease expiry. Best effort.
  void Leave();
  // The deadline of the calls made while stopping: short, they are courtesy.
  std::chrono::system_clock::time_point ShortDeadline() const;
  void HeartbeatLoop();
  void SetDraining(absl::string_view source);
  void Fail(absl::Status status);
  // Waits `d` or until stopping (or draining, when `wake_on_drain`).
  // Returns false when woken early.
  bool Sleep(absl::Duration d, bool wake_on_drain);
  bool stopping() const;

  ExecutorRunner(Options options, TaskHandler* handler, AsyncTaskHandler* async_handler);

  const Options options_;
  TaskHandler* const handler_;              // one of these two is set
  AsyncTaskHandler* const async_handler_;
  std::unique_ptr<ptxbench::v1::ExecutorService::Stub> stub_;

  // Serialises Register calls so one re-registration serves all threads.
  absl::Mutex register_mu_ ABSL_ACQUIRED_BEFORE(mu_);

  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool loops_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status fatal_ ABSL_GUARDED_BY(mu_);
  std::string executor_id_ ABSL_GUARDED_BY(mu_);
  // +1 per successful Register.
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_) = absl::Seconds(5);
  // Leases held now, by task id.
  std::map<std::string, std::shared_ptr<HeldTask>> held_ ABSL_GUARDED_BY(mu_);
  // Async: tasks started and not yet reported, and the finished ones waiting
  // for a reporter.
  int started_tasks_ ABSL_GUARDED_BY(mu_) = 0;
  int polling_ ABSL_GUARDED_BY(mu_) = 0;  // lease polls in flight
  std::deque<std::pair<ptxbench::v1::CompleteRequest, std::shared_ptr<HeldTask>>> finished_
      ABSL_GUARDED_BY(mu_);
  // In-flight calls; the bool says whether it is a Lease poll.
  std::map<grpc::ClientContext*, bool> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_EXECUTOR_RUNNER_H_
