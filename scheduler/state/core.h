#ifndef PTXBENCH_SCHEDULER_STATE_CORE_H_
#define PTXBENCH_SCHEDULER_STATE_CORE_H_

// Room scheduler/state/: the live state machine, the only writer. Owns Core
// (this header: transitions applied, leases, budgets), the writer thread in
// front of it (dispatcher.h), executors (executor_registry.h), fairness
// between experiments (fair_queue.h), the scheduler's metrics (metrics.h).
// May include: spec/, store/, feedback/.
//
// The trajectory state machine and task leasing (docs/ARCHITECTURE.md, "The
// state machine" and "Leasing and recovery").
//
// Core owns the in-memory indexes of live work (ready queues, backoff heap,
// current leases, executors) and changes the database to match every
// transition. The database stays the source of truth: Load() rebuilds the
// indexes from it after a restart.
//
// Every state change goes through the transition tables of
// scheduler/store/transitions.h (Core::Transit, Core::TransitTask); every SQL
// statement through the row stores (TaskStore, TrajectoryStore, ...).
//
// Threading: not thread-safe. Every method runs on the scheduler's single
// writer thread inside the batch transaction (see Dispatcher), or directly in
// tests; once bound (BindToWriterThread) each method checks it. A method
// that returns an error has changed nothing, in memory or in the database
// (it validates before it mutates; an SQL failure after that is fatal to the
// process, see storage::WriteQueue).

#include <cstdint>
#include <functional>
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
#include "experiment_spec/rendered_prompts.h"
#include "experiment_spec/spec.h"
#include "ptxbench/v1/client.pb.h"
#include "ptxbench/v1/executor.pb.h"
#include "scheduler/state/executor_registry.h"
#include "scheduler/state/fair_queue.h"
#include "scheduler/state/lease_table.h"
#include "scheduler/state/metrics.h"
#include "scheduler/state/payloads.h"
#include "scheduler/store/experiment_store.h"
#include "scheduler/store/schema.h"
#include "scheduler/store/stage_manifest_store.h"
#include "scheduler/store/task_store.h"
#include "scheduler/store/token_store.h"
#include "scheduler/store/trajectory_store.h"
#include "scheduler/store/transitions.h"
#include "scheduler/store/turn_store.h"
#include "storage/database.h"
#include "storage/write_queue.h"

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
  // Agent sessions: their wall time (agent.wall_time) plus this. The gateway
  // ends a session at its wall time, not counting the time it waited for
  // evaluations; this bounds a lease that outlives that.
  absl::Duration agent_attempt_slack = absl::Hours(24);
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
  // A workload's importance (workloads::Workload::importance) by definition
  // and workload id, for the scores stored with each correct result
  // (verdict::WeightedScores). Empty: every workload weighs 1.
  std::function<double(const std::string& definition, const std::string& workload)>
      workload_importance;
};

struct SubmitOutcome {
  std::string experiment_id;
  bool created = false;
  int64_t trajectories = 0;
};

// Where a change made in parts (Core::CancelExperiment and the like) is.
struct WritePart {
  int64_t after = 0;    // rowid of the last trajectory looked at
  int64_t changed = 0;  // trajectories changed by all parts so far
  bool started = false;
  bool done = false;
};

// A submission written in parts (Core::BeginSubmit; Dispatcher::Submit). Its
// experiment is staged, seen by no reader and leased by no one, until
// FinishSubmit shows it; parts of any size keep each write short.
struct StagedSubmit {
  // !outcome.created: the experiment existed (the same spec); nothing to write.
  SubmitOutcome outcome;
  int64_t experiment = 0;  // rowid
  std::map<std::string, std::string> system_hash;  // by prompt tag
  std::map<std::string, std::string> task_hash;    // by TaskPromptKey
  size_t written = 0;  // trajectories written so far, in the spec's order
  // The first task of each trajectory written, queued by FinishSubmit.
  std::vector<std::pair<int64_t, const std::string*>> queued;  // task rowid, model
};

class Core {
 public:
  Core(storage::Database* db, Clock* clock, CoreOptions options);
  ~Core();

  // From now on every method checks that it runs on `queue`'s writer thread
  // and aborts the process when not. The Dispatcher binds its queue after
  // Load; a Core never bound (tests) checks nothing.
  void BindToWriterThread(const storage::WriteQueue* queue);

  // Rebuilds the in-memory indexes from the database. Leases held at the
  // time of a restart get a fresh lease_ttl from now: their executors could
  // not heartbeat while the scheduler was down.
  absl::Status Load();

  // --- client operations ---
  // Submits `experiment` whole, in one op: BeginSubmit, every part,
  // FinishSubmit.
  absl::StatusOr<SubmitOutcome> Submit(const experiment_spec::ExpandedExperiment& experiment,
                                       const experiment_spec::RenderedPrompts& prompts);
  // A submission in parts, each its own op (Dispatcher::Submit). `experiment`
  // must outlive the StagedSubmit. Begin checks and writes the staged
  // experiment and its prompts; each part writes up to `max_trajectories`
  // more trajectories and their first tasks; Finish shows the experiment
  // and queues its tasks. AbandonSubmitPart deletes up to `max_rows` of what
  // was written; true when nothing is left.
  absl::StatusOr<StagedSubmit> BeginSubmit(const experiment_spec::ExpandedExperiment& experiment,
                                           const experiment_spec::RenderedPrompts& prompts);
  absl::Status SubmitPart(const experiment_spec::ExpandedExperiment& experiment,
                          size_t max_trajectories, StagedSubmit& staged);
  absl::Status FinishSubmit(const experiment_spec::ExpandedExperiment& experiment,
                            StagedSubmit& staged);
  absl::StatusOr<bool> AbandonSubmitPart(const StagedSubmit& staged, int64_t max_rows);
  // A one-off evaluation (`ptxbench eval` through a scheduler): `experiment`
  // holds one trajectory of one turn, whose answer is `answer` — the kernel
  // file in a code block, recorded as that turn's answer (provider "file")
  // so the turn goes straight to evaluation. Leasing, retries and recovery
  // are those of any experiment. Returns the trajectory id.
  absl::StatusOr<std::string> SubmitEval(const experiment_spec::ExpandedExperiment& experiment,
                                         const experiment_spec::RenderedPrompts& prompts,
                                         const std::string& answer);
  // Changes to a whole experiment, made in parts (Dispatcher::RunInParts):
  // each call changes up to `max` trajectories and moves `part` on, until
  // part.done. Each part is consistent on its own; between parts other
  // calls run, and a trajectory not reached yet goes on as before.
  //
  // Cancels every live trajectory of the experiment.
  absl::Status CancelExperiment(const std::string& experiment_id, int max, WritePart& part);
  // Resumes FAILED trajectories of `scope` from their failed step.
  absl::Status Retry(const std::string& experiment_id, ptxbench::v1::RetryScope scope, int max,
                     WritePart& part);
  // Raises the turn limit (checked and set by the first part); the
  // LIMITS_EXCEEDED trajectories reached ask the model again.
  absl::Status Extend(const std::string& experiment_id, int num_turns, int max,
                      WritePart& part);
  // The same, whole in one call (tests); returns how many changed.
  absl::StatusOr<int64_t> CancelExperiment(const std::string& experiment_id);
  absl::StatusOr<int64_t> Retry(const std::string& experiment_id,
                                ptxbench::v1::RetryScope scope);
  absl::StatusOr<int64_t> Extend(const std::string& experiment_id, int num_turns);
  // 1 when the trajectory was live and is now CANCELLED, else 0.
  absl::StatusOr<int64_t> CancelTrajectory(const std::string& trajectory_id);
  absl::Status Drain(const std::string& executor_id);
  // Every executor with the tasks it holds now.
  absl::StatusOr<std::vector<ptxbench::v1::ExecutorInfo>> ListExecutors();

  // --- executor operations ---
  // `owner`: the name of the caller's token (ExecutorRegistry::Register).
  absl::StatusOr<ptxbench::v1::RegisterResponse> Register(
      const ptxbench::v1::RegisterRequest& request, const std::string& owner = "");
  // PERMISSION_DENIED unless the token named `owner` registered the
  // executor (or it is unknown). The service checks this before every lease,
  // heartbeat and report.
  absl::Status CheckOwner(const std::string& executor_id, const std::string& owner) const;
  // A task the executor can run now, of one of `kinds` (empty: any), or
  // nullopt. NOT_FOUND for an unknown executor (it must register again).
  absl::StatusOr<std::optional<ptxbench::v1::Task>> TryLease(
      const std::string& executor_id, const std::set<StepKind>& kinds = {});
  // From now on TryLease grants nothing, to anyone: the scheduler is
  // stopping and only takes the reports of what is held (main.cc's report
  // grace). Reports, heartbeats and goodbyes go on as before.
  void StopLeasing() { leasing_stopped_ = true; }
  bool IsDraining(const std::string& executor_id) const;
  bool IsKnownExecutor(const std::string& executor_id) const;
  ptxbench::v1::HeartbeatResponse Heartbeat(const ptxbench::v1::HeartbeatRequest& request);
  // FAILED_PRECONDITION when the lease is not current; PERMISSION_DENIED
  // when another executor holds it; OK (and no change) for a duplicate of an
  // accepted report.
  absl::Status Complete(const ptxbench::v1::CompleteRequest& request);
  // Agent mode (core_agent.cc): the session of a current AGENT lease asks
  // for an evaluation (the first call of an action id makes a turn and
  // queues it) or for its result (a repeat). done is set once evaluated.
  absl::StatusOr<ptxbench::v1::AgentEvalResponse> AgentEval(
      const ptxbench::v1::AgentEvalRequest& request);
  // Grows whenever an evaluation of an agent session ends, so the sessions
  // waiting for one are re-asked only then.
  int64_t AgentEvalGeneration() const;

  // The executor stops for good (ExecutorService.Leave): it takes nothing
  // new, and every lease it still holds goes back to the queue at once, as
  // no failure. Returns how many; 0 for an unknown executor.
  absl::StatusOr<int> Leave(const std::string& executor_id);

  // --- tokens: the service creates and lists them through this ---
  TokenStore& tokens();
  // Revokes a token (TokenStore::Revoke); the executors registered under it
  // get no task from now on, not even a long poll parked before.
  absl::StatusOr<ptxbench::v1::TokenInfo> RevokeToken(const std::string& name, int64_t now_ms);

  // --- pipeline stage manifests: the service records and lists them ---
  StageManifestStore& stage_manifests();

  // Expires leases, releases tasks whose backoff ended. Cheap when idle.
  absl::Status Tick();

  // Ready tasks (not counting those in backoff).
  int64_t ReadyCount() const;
  // Live work now, for /metrics (core_metrics.cc).
  SchedulerGauges Gauges() const;
  // Safe to read from any thread (atomics).
  const SchedulerCounters& counters() const { return counters_; }
  // Grows whenever a task becomes ready, so waiters are re-tried only then.
  int64_t ReadyGeneration() const;

 private:
  // Load: deletes what a submission cut short by a restart wrote.
  absl::Status DeleteStagedExperiments();
  using Executor = ExecutorRegistry::Executor;
  using Lease = LeaseTable::Lease;
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
  const storage::WriteQueue* writer_ = nullptr;  // see BindToWriterThread
  TaskStore tasks_;
  TrajectoryStore trajectories_;
  ExperimentStore experiment_rows_;
  TurnStore turns_;
  TokenStore tokens_;
  StageManifestStore stage_manifests_;
  TaskPayloads payloads_;  // what a lease carries
  ExecutorRegistry executors_;
  std::map<int64_t, ExperimentRow> experiments_;
  FairQueue llm_ready_;
  FairQueue eval_ready_;
  FairQueue agent_ready_;  // by "cli@version"
  int64_t agent_eval_generation_ = 0;
  TimerHeap delayed_;         // queued tasks in backoff, by not_before
  LeaseTable leases_;
  bool leasing_stopped_ = false;
  // Where a task in backoff goes when its time comes; erased on cancel.
  std::unordered_map<int64_t, ReadyRef> delayed_refs_;
  SchedulerCounters counters_;
  int64_t ready_generation_ = 0;

  // core.cc
  // Aborts when bound to a writer thread and called from another one.
  void AssertOnWriterThread() const;
  // Whether an active worker with a healthy GPU of `architectures` (where
  // PopFor sends a full evaluation) also satisfies `can`.
  bool HasActiveGpuWorker(const std::vector<std::string>& architectures,
                          const std::function<bool(const ptxbench::v1::Capabilities&)>& can) const;
  // OK when every definition of `x` that only its PyTorch code computes can
  // be evaluated by an active executor; else why not.
  absl::Status CheckPyTorchReferences(const experiment_spec::ExpandedExperiment& x) const;
  // Agent mode: an active gateway runs sessions of the experiment's CLI at
  // its pinned version; else refused before anything is written.
  absl::Status CheckAgentClis(const experiment_spec::ExpandedExperiment& x) const;
  // An experiment that asks for profiles needs an active worker with a
  // healthy GPU of its architectures that can profile.
  absl::Status CheckProfilers(const experiment_spec::ExpandedExperiment& x) const;
  // One that asks for the memcheck gate, an active worker of its
  // architectures with compute-sanitizer.
  absl::Status CheckSanitizers(const experiment_spec::ExpandedExperiment& x) const;
  // A Triton experiment ("language": "triton") of full evaluations needs an
  // active worker with a healthy GPU of its architectures that runs Triton
  // (and also profiles, when it asks for profiles: PopFor gives its
  // evaluations only to a worker that does both). Compile-only ones go
  // anywhere.
  absl::Status CheckTriton(const experiment_spec::ExpandedExperiment& x) const;
  absl::Status AddEvent(const std::string& experiment, const std::string& trajectory,
                        int turn, const std::string& kind, const std::string& detail);
  absl::StatusOr<int64_t> ExperimentRowid(const std::string& experiment_id) const;
  // core_transit.cc: the only callers of the row stores' Transit.
  // Moves `task` (of a trajectory of `model`) by `event` and keeps memory in
  // step: leaving LEASED drops the lease, leaving QUEUED its backoff timer;
  // back-off queues it again at `not_before`, resume at once.
  absl::Status TransitTask(TaskRow& task, const std::string& model, TaskEvent event,
                           absl::Time not_before = absl::InfinitePast());
  // Moves `trajectory` by `event` and applies the table row's effect. `why`
  // is the reason of a terminal state and the detail of the event log entry.
  absl::Status Transit(TrajectoryRow& trajectory, TrajectoryEvent event, const std::string& why,
                       ptxbench::v1::FailureClass failure_class =
                           ptxbench::v1::FAILURE_CLASS_UNSPECIFIED);
  absl::Status ApplyEffect(const TrajectoryRow& trajectory, TrajectoryEffect effect);
  // Inserts a queued task and makes it leasable.
  absl::Status EnqueueStep(const TrajectoryRow& trajectory, int turn, StepKind kind);
  // core_lease.cc
  // Whether it can take full evaluations (a healthy GPU).
  // A real worker with a profiler, or a simulated one (its profiles are
  // simulated, and say so).
  static bool CanProfile(const ptxbench::v1::Capabilities& caps) {
    return caps.simulated() || !caps.profiler().empty();
  }
  // A real worker with compute-sanitizer, or a simulated one.
  static bool CanMemcheck(const ptxbench::v1::Capabilities& caps) {
    return caps.simulated() || !caps.sanitizer().empty();
  }
  // A real worker whose Python has Triton, or a simulated one (it simulates
  // any language's evaluation, and says so).
  static bool CanRunTriton(const ptxbench::v1::Capabilities& caps) {
    return caps.simulated() || !caps.triton().empty();
  }
  static bool HasHealthyGpuOf(const ptxbench::v1::Capabilities& caps,
                              const std::vector<std::string>& architectures);
  // `triton`: the task is an evaluation that runs as Triton although its
  // experiment's language is not "triton" (EvalRunsAsTriton).
  std::string RouteKey(int64_t experiment, StepKind kind, const std::string& model,
                       bool triton = false) const;
  // Whether the evaluation of `trajectory`'s turn `turn` in a "solution"
  // experiment runs as Triton: its answer is a Triton solution, which
  // TaskPayloads::Build hands to the worker as its kernel.py. False for
  // other experiments (a Triton one routes as Triton by its language) and
  // when the kernel cannot be read.
  bool EvalRunsAsTriton(int64_t experiment, int64_t trajectory, int turn);
  void PushReady(int64_t task, const ReadyRef& ref);
  void PushDelayed(int64_t task, const ReadyRef& ref, absl::Time not_before);
  // Drops a lease from memory (executor, model in-flight count). No SQL.
  void ReleaseLease(int64_t task);
  std::optional<FairQueue::Popped> PopFor(const Executor& executor,
                                          const std::set<StepKind>& kinds);
  // Agent sessions it holds now.
  int AgentLeasesOf(const Executor& executor) const;
  // When a lease of `task` granted at `now` ends, heartbeats or not.
  absl::Time AttemptLimit(const TaskRow& task, absl::Time now) const;
  absl::StatusOr<ptxbench::v1::Task> GrantLease(TaskRow& task, Executor& executor);
  absl::Status ExpireLease(int64_t task, const std::string& why);
  absl::Duration Backoff(int failures) const;
  // core_complete.cc
  // `event`: kComplete for a leased task, kAnswerByFile for SubmitEval's.
  absl::Status CompleteLlm(TaskRow& task, TaskEvent event, TrajectoryRow& trajectory,
                           const ptxbench::v1::LlmResponse& response);
  // Stores an answer's turn (`turn` with its blobs), ends its task, counts
  // its cost; `note` ends the event's line.
  absl::Status RecordAnswer(TaskRow& task, TaskEvent event, TrajectoryRow& trajectory,
                            const ptxbench::v1::LlmResponse& response, AnswerRow turn,
                            absl::string_view note);
  absl::Status CompleteSynthesis(TaskRow& task, TrajectoryRow& trajectory,
                                 const ptxbench::v1::LlmResponse& response, AnswerRow turn);
  absl::Status CompleteEval(TaskRow& task, TrajectoryRow& trajectory,
                            const ptxbench::v1::EvalResult& result);
  absl::Status HandleFailure(TaskRow& task, TrajectoryRow& trajectory,
                             const ptxbench::v1::TaskFailure& failure);
  // After turn `turn` is done: ends the trajectory or queues the next turn.
  absl::Status AdvanceOrEnd(TrajectoryRow& trajectory, int turn, bool target_met);
  // Ends `trajectory` because its experiment's max_cost_usd was reached.
  absl::Status EndForBudget(TrajectoryRow& trajectory);
  // core_agent.cc
  // A session's end as its gateway reported it.
  absl::Status CompleteAgent(TaskRow& task, TrajectoryRow& trajectory,
                             const ptxbench::v1::AgentOutcome& outcome);
  // An evaluation of an agent session ended: recorded, the session goes on.
  absl::Status AgentTurnEvaluated(TrajectoryRow& trajectory, int turn);
  // A session that did not run its course (`why`, of `failure_class`): run
  // again when it evaluated nothing and agent.max_sessions allows, else the
  // trajectory ends with that class. Its task moves by `end_event` (kFail,
  // kPoison) when it is not run again.
  absl::Status EndOrRerunSession(TaskRow& task, TrajectoryRow& trajectory,
                                 ptxbench::v1::FailureClass failure_class,
                                 const std::string& why, TaskEvent end_event);
  absl::StatusOr<int> StartAgentTurn(TrajectoryRow& trajectory,
                                     const ptxbench::v1::AgentEvalRequest& request);
  absl::StatusOr<ptxbench::v1::AgentEvalResponse> AgentTurnResult(const TrajectoryRow& trajectory,
                                                                   int turn);
  // Keeps how a session ended and what it left (its records as blobs), and
  // adds what it spent after its last evaluation.
  absl::Status RecordAgentSession(TrajectoryRow& trajectory, ptxbench::v1::AgentOutcome outcome);
  // Adds a session's model spending to its trajectory and experiment.
  absl::Status AddAgentCost(TrajectoryRow& trajectory, double cost_usd);
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STATE_CORE_H_
