#ifndef PTXBENCH_SCHEDULER_STATE_DISPATCHER_H_
#define PTXBENCH_SCHEDULER_STATE_DISPATCHER_H_

// The thread-safe front of the scheduler's state: every operation is posted to
// the single writer thread (storage::WriteQueue), runs there on the Core
// inside a batch transaction, and its callback fires only after that batch
// committed. So a lease is never handed out, and a completion never
// acknowledged, before it is durable: a scheduler killed at any moment
// recovers from the database with no work lost and none done twice.
//
// Long-poll leases: a Lease that finds no task parks a waiter until a task it
// can run appears, its wait ends, or its caller goes away.
//
// Callbacks run on the write queue's reply thread, in order: they must be
// quick (finish an RPC) and never touch the Core, which is the writer's.

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <set>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "scheduler/state/core.h"
#include "storage/write_queue.h"

namespace ptxbench::scheduler {

struct DispatcherOptions {
  CoreOptions core;
  int max_batch = 512;
  // How often timers (lease expiry, backoff) are checked when idle.
  absl::Duration tick = absl::Milliseconds(50);
  // Big writes (Submit, RunInParts) go this many trajectories at a time,
  // each part an op of its own, so that no lease waits long behind them
  // (docs/DECISIONS.md, "Big writes in parts").
  int write_part = 1000;
};

class Dispatcher {
 public:
  template <typename T>
  using Callback = std::function<void(absl::StatusOr<T>)>;

  Dispatcher(std::unique_ptr<storage::Database> db, Clock* clock, DispatcherOptions options);
  ~Dispatcher();

  // Rebuilds the Core from the database, then starts the writer thread.
  absl::Status Start();
  // Finishes parked leases (empty), drains queued ops, stops the thread.
  void Stop();

  // Runs `fn` on the writer thread; `done` gets its result after commit.
  template <typename T>
  void Run(std::function<absl::StatusOr<T>(Core&)> fn, Callback<T> done);

  // Core::Submit in parts (Core::BeginSubmit): each part a solo op of
  // `write_part` trajectories, the ops of other calls running between them;
  // readers see the experiment only once whole. A part that fails deletes
  // what the earlier ones wrote, in parts too, before `done` has the error.
  void Submit(std::shared_ptr<const experiment_spec::ExpandedExperiment> experiment,
              std::shared_ptr<const experiment_spec::RenderedPrompts> prompts,
              Callback<SubmitOutcome> done);

  // Runs `part` (Core::CancelExperiment and the like) as solo ops, one after
  // another with the ops of other calls between them, until it is done;
  // `done` gets how many trajectories it changed, or the error that stopped
  // it (the parts before stay made).
  void RunInParts(std::function<absl::Status(Core&, int max, WritePart&)> part,
                  Callback<int64_t> done);

  // Lease with long-poll. `cancelled` is set by the RPC layer when the
  // caller went away; a parked waiter is then dropped.
  // `owner` is the caller's token name (Core::CheckOwner).
  void Lease(const ptxbench::v1::LeaseRequest& request, const std::string& owner,
             std::shared_ptr<std::atomic<bool>> cancelled,
             Callback<ptxbench::v1::LeaseResponse> done);

  // Core::Complete, and with request.next the executor's next task leased
  // in the same op (LeaseNow: never parks). `owner` as for Lease. `request`
  // must stay valid until `done` has run.
  void Complete(const ptxbench::v1::CompleteRequest& request, const std::string& owner,
                Callback<ptxbench::v1::CompleteResponse> done);

  // Core::AgentEval with long-poll: when the evaluation has not ended, waits
  // up to request.wait_ms (capped by max_lease_wait) for it, then answers
  // with what there is (done or not). `cancelled` and `owner` as for Lease.
  void AgentEval(const ptxbench::v1::AgentEvalRequest& request, const std::string& owner,
                 std::shared_ptr<std::atomic<bool>> cancelled,
                 Callback<ptxbench::v1::AgentEvalResponse> done);

  storage::WriteQueue::Stats GetStats() const { return queue_.GetStats(); }

  // Core::StopLeasing on the writer thread; from any thread, waits for it.
  absl::Status StopLeasing();
  // For /metrics (scheduler/state/metrics.h), from any thread. Gauges runs one op
  // on the writer thread and waits for it: kFailedPrecondition once stopped.
  absl::StatusOr<SchedulerGauges> Gauges();
  const SchedulerCounters& counters() const { return core_.counters(); }
  // From a Lease call's arrival (or a Complete's with next) to the reply with
  // a task, after its commit.
  const prometheus::Histogram& lease_wait_seconds() const { return lease_wait_seconds_; }
  const prometheus::Histogram& commit_seconds() const { return queue_.commit_seconds(); }
  const prometheus::Histogram& sync_seconds() const { return queue_.sync_seconds(); }

 private:
  struct Waiter {
    std::string executor_id;
    std::set<StepKind> kinds;  // empty: any
    absl::Time asked;  // when the Lease call arrived
    absl::Time deadline;
    std::shared_ptr<std::atomic<bool>> cancelled;
    Callback<ptxbench::v1::LeaseResponse> done;
  };
  struct AgentWaiter {
    ptxbench::v1::AgentEvalRequest request;
    absl::Time deadline;
    std::shared_ptr<std::atomic<bool>> cancelled;
    Callback<ptxbench::v1::AgentEvalResponse> done;
  };
  // Writer thread: what a Lease gets without waiting (a task, drain,
  // reregister or nothing), or the caller's error. The owner was checked.
  absl::StatusOr<ptxbench::v1::LeaseResponse> LeaseNow(const ptxbench::v1::LeaseRequest& request);
  // Writer thread: tick timers, then hand ready tasks to parked waiters and
  // ended evaluations to the sessions waiting for them.
  void OnBatch();
  // Posts `serve` as an op of its own, whose replies go out after its
  // batch committed; `posted` is set until it runs.
  void PostServe(bool* posted,
                 std::function<absl::Status(std::vector<std::function<void()>>*)> serve);
  absl::Status ServeWaiters(std::vector<std::function<void()>>* replies);
  absl::Status ServeAgentWaiters(std::vector<std::function<void()>>* replies);
  static void FatalIfBroken(const absl::Status& status);
  struct Submission;
  // Submit's steps, each posting the next.
  void PostSubmitPart(std::shared_ptr<Submission> s);
  void PostSubmitFinish(std::shared_ptr<Submission> s);
  void PostSubmitAbandon(std::shared_ptr<Submission> s, absl::Status why);
  // A task granted to a call that arrived at `asked` is being sent.
  void GrantedAfter(absl::Time asked);

  Clock* clock_;
  DispatcherOptions options_;
  storage::Database* db_;  // owned by queue_
  storage::WriteQueue queue_;
  Core core_;
  prometheus::Histogram lease_wait_seconds_{prometheus::DurationBuckets(1e-3, 50)};
  // Writer-thread state.
  std::deque<Waiter> waiters_;
  int64_t served_generation_ = -1;
  bool serve_posted_ = false;
  std::deque<AgentWaiter> agent_waiters_;
  int64_t served_agent_generation_ = -1;
  bool agent_serve_posted_ = false;
};

template <typename T>
void Dispatcher::Run(std::function<absl::StatusOr<T>(Core&)> fn, Callback<T> done) {
  auto result = std::make_shared<absl::StatusOr<T>>(absl::UnknownError("not run"));
  queue_.Post(
      [this, fn = std::move(fn), result](storage::Database&) -> absl::Status {
        *result = fn(core_);
        FatalIfBroken(result->status());
        return result->status();
      },
      [result, done = std::move(done)](absl::Status) { done(std::move(*result)); });
}

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STATE_DISPATCHER_H_
