#ifndef PTXBENCH_SCHEDULER_CORE_H_
#define PTXBENCH_SCHEDULER_CORE_H_

// The trajectory state machine (DESIGN §2) and task leasing (§3).
//
// Core owns the in-memory indexes of live work (ready queues, backoff heap,
// current leases, executors) and changes the database to match every
// transition. The database stays the source of truth: Load() rebuilds the
// indexes from it after a restart.
//
// Threading: not thread-safe. Every method runs on the scheduler's single
// writer thread inside the batch transaction (see Dispatcher), or directly in
// tests. A method that returns an error has changed nothing, in memory or in
// the database (it validates before it mutates; an SQL failure after that is
// fatal to the process, see storage::WriteQueue).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "ptxbench/v1/client.pb.h"
#include "ptxbench/v1/executor.pb.h"
#include "scheduler/fair_queue.h"
#include "scheduler/schema.h"
#include "scheduler/spec.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

struct CoreOptions {
  // A lease not extended by a heartbeat within this time expires.
  absl::Duration lease_ttl = absl::Seconds(30);
  absl::Duration heartbeat_interval = absl::Seconds(5);
  // The longest a lease long-poll is held (the dispatcher's cap). An idle
  // executor is seen only when its poll comes back, so it is shown "lost"
  // only after three heartbeat intervals more than that.
  absl::Duration max_lease_wait = absl::Seconds(30);
  // Per-attempt run-time limits, heartbeats or not.
  absl::Duration max_llm_attempt = absl::Minutes(30);
  absl::Duration max_eval_attempt = absl::Minutes(30);
  // Backoff before a retried task may be leased again: base * 2^(n-1),
  // capped (n = the task's failures of that kind so far).
  absl::Duration backoff_base = absl::Seconds(1);
  absl::Duration backoff_max = absl::Minutes(2);
  // A task whose executor died (lease expired) this many times is POISONED.
  int max_executor_deaths = 3;
  int max_infra_failures = 5;
  int max_api_failures = 8;
  // Global cap on LLM calls in flight per model, across gateways.
  int default_model_inflight_cap = 512;
  std::map<std::string, int> model_inflight_caps;
};

// The rendered prompts a submission needs, computed off the writer thread.
struct RenderedPrompts {
  std::map<std::string, std::string> system_by_tag;
  // Key: TaskPromptKey(trajectory).
  std::map<std::string, std::string> task_by_key;
};
// Trajectories with the same task prompt share one: the definition, target,
// turns, workloads and the kernel to repair.
std::string TaskPromptKey(const TrajectorySpec& t);

struct SubmitOutcome {
  std::string experiment_id;
  bool created = false;
  int64_t trajectories = 0;
};

class Core {
 public:
  Core(storage::Database* db, Clock* clock, CoreOptions options);
  ~Core();

  // Rebuilds the in-memory indexes from the database. Leases held at the
  // time of a restart get a fresh lease_ttl from now: their executors could
  // not heartbeat while the scheduler was down.
  absl::Status Load();

  // --- client operations ---
  absl::StatusOr<SubmitOutcome> Submit(const ExpandedExperiment& experiment,
                                       const RenderedPrompts& prompts);
  // A one-off evaluation (`ptxbench eval` through a scheduler): `experiment`
  // holds one trajectory of one turn, whose answer is `answer` — the kernel
  // file in a code block, recorded as that turn's answer (provider "file")
  // so the turn goes straight to evaluation. Leasing, retries and recovery
  // are those of any experiment. Returns the trajectory id.
  absl::StatusOr<std::string> SubmitEval(const ExpandedExperiment& experiment,
                                         const RenderedPrompts& prompts,
                                         const std::string& answer);
  absl::StatusOr<int64_t> CancelExperiment(const std::string& experiment_id);
  absl::StatusOr<int64_t> CancelTrajectory(const std::string& trajectory_id);
  absl::StatusOr<int64_t> Retry(const std::string& experiment_id,
                                ptxbench::v1::RetryScope scope);
  absl::StatusOr<int64_t> Extend(const std::string& experiment_id, int num_turns);
  absl::Status Drain(const std::string& executor_id);
  std::vector<ptxbench::v1::ExecutorInfo> ListExecutors() const;

  // --- executor operations ---
  absl::StatusOr<ptxbench::v1::RegisterResponse> Register(
      const ptxbench::v1::RegisterRequest& request);
  // A task the executor can run now, or nullopt. NOT_FOUND for an unknown
  // executor (it must register again).
  absl::StatusOr<std::optional<ptxbench::v1::Task>> TryLease(const std::string& executor_id);
  bool IsDraining(const std::string& executor_id) const;
  bool IsKnownExecutor(const std::string& executor_id) const;
  ptxbench::v1::HeartbeatResponse Heartbeat(const ptxbench::v1::HeartbeatRequest& request);
  // FAILED_PRECONDITION when the lease is not current; OK (and no change)
  // for a duplicate of an accepted report.
  absl::Status Complete(const ptxbench::v1::CompleteRequest& request);

  // Expires leases, releases tasks whose backoff ended. Cheap when idle.
  absl::Status Tick();

  // Ready tasks (not counting those in backoff).
  int64_t ReadyCount() const { return llm_ready_.size() + eval_ready_.size(); }
  // Grows whenever a task becomes ready, so waiters are re-tried only then.
  int64_t ReadyGeneration() const { return ready_generation_; }

 private:
  struct ExperimentInfo {
    std::string id;
    std::string language;
    std::string context_policy;
    ptxbench::v1::EvalMode eval_mode = ptxbench::v1::FULL;
    int priority = 1;
    double max_cost_usd = 0;  // 0: no budget
    double cost_usd = 0;      // spent so far (model calls)
    // Reached the budget: no new LLM step starts (calls in flight finish).
    bool OverBudget() const { return max_cost_usd > 0 && cost_usd >= max_cost_usd; }
  };
  struct Lease {
    std::string lease_id;
    std::string executor;
    int64_t experiment = 0;
    StepKind kind = StepKind::kLlm;
    std::string route_key;
    absl::Time deadline;
    absl::Time attempt_limit;
  };
  struct Executor {
    ptxbench::v1::ExecutorInfo info;
    std::set<int64_t> tasks;
  };
  struct ReadyRef {
    int64_t experiment = 0;
    StepKind kind = StepKind::kLlm;
    std::string route_key;
  };
  struct Timer {
    absl::Time at;
    int64_t task;
    bool operator>(const Timer& o) const { return at > o.at; }
  };
  using TimerHeap = std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>>;

  Clock* clock_;
  storage::Database* db_;
  CoreOptions options_;
  std::map<int64_t, ExperimentInfo> experiments_;
  FairQueue llm_ready_;
  FairQueue eval_ready_;
  TimerHeap delayed_;         // queued tasks in backoff, by not_before
  TimerHeap lease_deadlines_; // lazy: checked against leases_ when popped
  std::unordered_map<int64_t, Lease> leases_;
  std::map<std::string, int> model_inflight_;
  std::map<std::string, Executor> executors_;
  // Where a task in backoff goes when its time comes; erased on cancel.
  std::unordered_map<int64_t, ReadyRef> delayed_refs_;
  // System and task prompts are shared by many trajectories: kept decoded.
  std::unordered_map<std::string, std::string> prompt_cache_;
  uint64_t lease_counter_ = 0;
  int64_t ready_generation_ = 0;
  uint64_t lease_salt_ = 0;

  // core.cc
  // "active", "draining" or "lost" (no heartbeat for three intervals).
  std::string ExecutorStatus(const Executor& e) const;
  // OK when every definition of `x` that only its PyTorch code computes can
  // be evaluated by an active executor; else why not.
  absl::Status CheckPyTorchReferences(const ExpandedExperiment& x) const;
  absl::Status AddEvent(const std::string& experiment, const std::string& trajectory,
                        int turn, const std::string& kind, const std::string& detail);
  absl::StatusOr<int64_t> ExperimentRowid(const std::string& experiment_id) const;
  // core_lease.cc
  // Whether it can take full evaluations (a healthy GPU).
  static bool HasHealthyGpu(const ptxbench::v1::Capabilities& caps);
  std::string RouteKey(int64_t experiment, StepKind kind, const std::string& model) const;
  void PushReady(int64_t task, const ReadyRef& ref);
  void PushDelayed(int64_t task, const ReadyRef& ref, absl::Time not_before);
  // Drops a lease from memory (executor, model in-flight count). No SQL.
  void ReleaseLease(int64_t task);
  std::optional<FairQueue::Popped> PopFor(const Executor& executor);
  absl::StatusOr<ptxbench::v1::Task> GrantLease(const struct TaskRow& task, Executor& executor);
  absl::Status BuildPayload(const struct TaskRow& task, const struct TrajectoryRow& trajectory,
                            ptxbench::v1::Task* out);
  absl::StatusOr<std::string> CachedBlob(const std::string& hash);
  absl::Status ExpireLease(int64_t task, const std::string& why);
  absl::Duration Backoff(int failures) const;
  // core_complete.cc
  absl::Status CompleteLlm(const struct TaskRow& task, struct TrajectoryRow& trajectory,
                           const ptxbench::v1::LlmResponse& response);
  absl::Status CompleteEval(const struct TaskRow& task, struct TrajectoryRow& trajectory,
                            const ptxbench::v1::EvalResult& result);
  absl::Status HandleFailure(const struct TaskRow& task, struct TrajectoryRow& trajectory,
                             const ptxbench::v1::TaskFailure& failure);
  // Inserts a queued task and makes it leasable.
  absl::Status EnqueueStep(const struct TrajectoryRow& trajectory, int turn, StepKind kind);
  // After turn `turn` is done: ends the trajectory or queues the next turn.
  absl::Status AdvanceOrEnd(struct TrajectoryRow& trajectory, int turn, bool target_met);
  // Ends `trajectory` because its experiment's max_cost_usd was reached.
  absl::Status EndForBudget(struct TrajectoryRow& trajectory);
  absl::Status EndTrajectory(struct TrajectoryRow& trajectory,
                             ptxbench::v1::TrajectoryState state,
                             ptxbench::v1::FailureClass failure_class,
                             const std::string& reason);
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_CORE_H_
