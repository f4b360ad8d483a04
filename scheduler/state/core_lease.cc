// Core: leasing, heartbeats, expiry, backoff and recovery (docs/ARCHITECTURE.md,
// "Leasing and recovery").
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/gpu_arch.h"
#include "common/status_macros.h"
#include "scheduler/state/core.h"
#include "storage/blob_store.h"
#include "workloads/solution.h"

namespace ptxbench::scheduler {

using experiment_spec::AgentSettings;

namespace v1 = ::ptxbench::v1;

namespace {
// Evaluation route keys: compile-only ones go to any worker; full ones are
// kFullPrefix + the experiment's architectures ("full:sm_100,sm_90") and go to
// a worker with a healthy GPU of one of them; profiled ones
// ("profile:sm_90") to such a worker that can profile too. A Triton
// evaluation's full and profiled keys start with kEvalTritonPrefix
// ("triton:full:sm_90"): they go only to workers that run Triton, and what
// follows routes as above. A compile-only one needs no Triton (the worker
// checks the module's shape; Triton's JIT runs only before timing).
constexpr char kEvalTritonPrefix[] = "triton:";
constexpr char kEvalFullPrefix[] = "full:";
constexpr char kEvalProfilePrefix[] = "profile:";
// Before all of these: evaluations that pass the memcheck gate first
// ("memcheck:full:sm_90", "memcheck:triton:full:sm_90") go only to a worker
// with compute-sanitizer.
constexpr char kEvalMemcheckPrefix[] = "memcheck:";
constexpr char kEvalCompileOnly[] = "compile-only";
}  // namespace

bool Core::HasHealthyGpuOf(const v1::Capabilities& caps,
                           const std::vector<std::string>& architectures) {
  return std::any_of(caps.gpus().begin(), caps.gpus().end(), [&](const v1::Gpu& g) {
    return g.healthy() && TargetsArchitecture(architectures, g.sm_arch());
  });
}

bool Core::EvalRunsAsTriton(int64_t experiment, int64_t trajectory, int turn) {
  auto it = experiments_.find(experiment);
  if (it == experiments_.end() || it->second.language != "solution") return false;
  absl::StatusOr<TurnKernel> kernel = turns_.Kernel(trajectory, turn);
  if (!kernel.ok() || kernel->blob.empty()) return false;
  absl::StatusOr<std::string> text = storage::GetBlob(*db_, kernel->blob);
  return text.ok() && workloads::TritonModuleOfJson(*text).has_value();
}

std::string Core::RouteKey(int64_t experiment, StepKind kind, const std::string& model,
                           bool triton) const {
  if (kind == StepKind::kLlm) return model;
  auto it = experiments_.find(experiment);
  if (it == experiments_.end()) return kEvalCompileOnly;  // not reached: tasks have experiments
  if (kind == StepKind::kAgent) {
    // Agent tasks exist only in agent-mode experiments.
    const AgentSettings& a = *it->second.agent;
    return absl::StrCat(a.cli, "@", a.cli_version);
  }
  if (it->second.eval_mode == v1::COMPILE_ONLY) return kEvalCompileOnly;
  const absl::string_view triton_prefix =
      triton || it->second.language == "triton" ? kEvalTritonPrefix : "";
  return absl::StrCat(it->second.memcheck ? kEvalMemcheckPrefix : "", triton_prefix,
                      it->second.profile ? kEvalProfilePrefix : kEvalFullPrefix,
                      EncodeArchitectures(it->second.architectures));
}

void Core::PushReady(int64_t task, const ReadyRef& ref) {
  ++ready_generation_;
  FairQueue& queue = ref.kind == StepKind::kLlm    ? llm_ready_
                     : ref.kind == StepKind::kEval ? eval_ready_
                                                   : agent_ready_;
  queue.Push(ref.experiment, ref.route_key, task);
}

void Core::PushDelayed(int64_t task, const ReadyRef& ref, absl::Time not_before) {
  delayed_refs_[task] = ref;
  delayed_.push(Timer{not_before, task});
}

absl::Duration Core::Backoff(int failures) const {
  absl::Duration d = options_.backoff_base;
  for (int i = 1; i < failures && d < options_.backoff_max; ++i) d *= 2;
  return std::min(d, options_.backoff_max);
}

void Core::ReleaseLease(int64_t task) {
  std::optional<Lease> lease = leases_.Remove(task);
  if (!lease) return;
  if (Executor* e = executors_.Find(lease->executor)) e->tasks.erase(task);
}

int Core::AgentLeasesOf(const Executor& executor) const {
  int n = 0;
  for (int64_t task : executor.tasks) {
    const Lease* lease = leases_.Find(task);
    n += lease != nullptr && lease->kind == StepKind::kAgent;
  }
  return n;
}

absl::Time Core::AttemptLimit(const TaskRow& task, absl::Time now) const {
  switch (task.kind) {
    case StepKind::kLlm: return now + options_.max_llm_attempt;
    case StepKind::kEval: return now + options_.max_eval_attempt;
    case StepKind::kAgent: {
      // The gateway ends a session at its wall time, not counting the time
      // it waits for evaluations, which the scheduler cannot see; this is
      // only the backstop against a gateway that heartbeats a session it no
      // longer runs.
      const ExperimentRow& exp = experiments_.at(task.experiment);
      return now + absl::Seconds(exp.agent->wall_time_s) + options_.agent_attempt_slack;
    }
  }
  return now;
}

std::optional<FairQueue::Popped> Core::PopFor(const Executor& executor,
                                              const std::set<StepKind>& kinds) {
  const v1::Capabilities& caps = executor.info.capabilities();
  auto wants = [&](StepKind k) { return kinds.empty() || kinds.count(k) > 0; };
  if (executor.info.kind() == v1::GATEWAY) {
    // A gateway says how many sessions it runs; it asks for one only when
    // it has room, and this holds it to its word.
    if (wants(StepKind::kAgent) && AgentLeasesOf(executor) < caps.agent_slots()) {
      std::optional<FairQueue::Popped> session =
          agent_ready_.Pop(
              [&](const std::string& cli_at_version) {
                for (const v1::AgentCliInstall& cli : caps.agent_clis()) {
                  if (absl::StrCat(cli.name(), "@", cli.version()) == cli_at_version) return true;
                }
                return false;
              },
              // An experiment runs at most agent.max_parallel sessions at once.
              [&](int64_t experiment) {
                auto exp = experiments_.find(experiment);
                if (exp == experiments_.end()) return false;
                const int64_t cap = exp->second.agent->max_parallel;
                return cap == 0 || leases_.Sessions(experiment) < cap;
              });
      if (session) return session;
    }
    if (!wants(StepKind::kLlm)) return std::nullopt;
    return llm_ready_.Pop([&](const std::string& model) {
      if (!caps.serves_any_model() &&
          std::find(caps.models().begin(), caps.models().end(), model) == caps.models().end()) {
        return false;
      }
      auto cap = options_.model_inflight_caps.find(model);
      int limit = cap != options_.model_inflight_caps.end() ? cap->second
                                                            : options_.default_model_inflight_cap;
      return leases_.InFlight(model) < limit;
    });
  }
  if (!wants(StepKind::kEval)) return std::nullopt;
  return eval_ready_.Pop([&](const std::string& key) {
    if (key == kEvalCompileOnly) return true;
    absl::string_view targets = key;
    if (absl::ConsumePrefix(&targets, kEvalMemcheckPrefix) && !CanMemcheck(caps)) return false;
    if (absl::ConsumePrefix(&targets, kEvalTritonPrefix) && !CanRunTriton(caps)) return false;
    if (absl::ConsumePrefix(&targets, kEvalProfilePrefix)) {
      if (!CanProfile(caps)) return false;
    } else if (!absl::ConsumePrefix(&targets, kEvalFullPrefix)) {
      return false;
    }
    for (absl::string_view arch : absl::StrSplit(targets, ',')) {
      for (const v1::Gpu& g : caps.gpus()) {
        if (g.healthy() && g.sm_arch() == arch) return true;
      }
    }
    return false;
  });
}

absl::StatusOr<std::optional<v1::Task>> Core::TryLease(const std::string& executor_id,
                                                       const std::set<StepKind>& kinds) {
  AssertOnWriterThread();
  Executor* found = executors_.Find(executor_id);
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat("unknown executor '", executor_id, "'"));
  }
  Executor& executor = *found;
  executor.info.set_last_seen_unix_ms(absl::ToUnixMillis(clock_->Now()));
  if (leasing_stopped_ || executor.info.draining() || executor.owner_revoked) return std::nullopt;
  while (true) {
    std::optional<FairQueue::Popped> popped = PopFor(executor, kinds);
    if (!popped) return std::nullopt;
    // Entries of cancelled tasks are left in the queues and skipped here.
    PTXB_ASSIGN_OR_RETURN(TaskRow task, tasks_.Read(popped->task));
    if (task.state != TaskState::kQueued || leases_.Holds(task.rowid)) continue;
    if (task.kind != StepKind::kEval && experiments_.at(task.experiment).OverBudget()) {
      // Queued before the budget ran out: it never starts (the transition
      // cancels it).
      PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, trajectories_.Read(task.trajectory));
      PTXB_RETURN_IF_ERROR(EndForBudget(trajectory));
      continue;
    }
    PTXB_ASSIGN_OR_RETURN(v1::Task granted, GrantLease(task, executor));
    counters_.leases_granted.fetch_add(1, std::memory_order_relaxed);
    return granted;
  }
}

absl::StatusOr<v1::Task> Core::GrantLease(TaskRow& task, Executor& executor) {
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, trajectories_.Read(task.trajectory));
  const absl::Time now = clock_->Now();
  Lease lease;
  lease.lease_id = leases_.NewLeaseId();
  lease.executor = executor.info.executor_id();
  lease.experiment = task.experiment;
  lease.kind = task.kind;
  lease.route_key = RouteKey(task.experiment, task.kind, trajectory.model);
  lease.attempt_limit = AttemptLimit(task, now);
  lease.deadline = std::min(now + options_.lease_ttl, lease.attempt_limit);

  v1::Task out;
  out.mutable_lease()->set_task_id(FormatTaskId(task.rowid));
  out.mutable_lease()->set_lease_id(lease.lease_id);
  out.set_kind(static_cast<v1::TaskKind>(task.kind));
  out.set_trajectory_id(trajectory.id);
  out.set_experiment_id(trajectory.experiment_id);
  out.set_turn(task.turn);
  out.set_attempt(task.attempt + 1);
  out.set_lease_deadline_unix_ms(absl::ToUnixMillis(lease.deadline));
  PTXB_RETURN_IF_ERROR(payloads_.Build(task, trajectory, experiments_.at(task.experiment), &out));

  PTXB_RETURN_IF_ERROR(tasks_.Lease(task, lease.lease_id, absl::ToUnixMillis(lease.deadline),
                                    lease.executor));
  PTXB_RETURN_IF_ERROR(AddEvent(trajectory.experiment_id, trajectory.id, task.turn,
                                "task.leased",
                                absl::StrCat(StepKindName(task.kind), " attempt ",
                                             task.attempt, " to ", lease.executor)));
  executor.tasks.insert(task.rowid);
  leases_.Add(task.rowid, std::move(lease));
  return out;
}

v1::HeartbeatResponse Core::Heartbeat(const v1::HeartbeatRequest& request) {
  AssertOnWriterThread();
  v1::HeartbeatResponse response;
  Executor* e = executors_.Find(request.executor_id());
  if (e == nullptr) {
    response.set_reregister(true);
    *response.mutable_revoked() = request.leases();
    return response;
  }
  const absl::Time now = clock_->Now();
  e->info.set_last_seen_unix_ms(absl::ToUnixMillis(now));
  response.set_drain(e->info.draining());
  absl::Time deadline = now + options_.lease_ttl;
  for (const v1::LeaseRef& ref : request.leases()) {
    absl::StatusOr<int64_t> task = ParseTaskId(ref.task_id());
    const Lease* lease = task.ok() ? leases_.Find(*task) : nullptr;
    // Only the holder extends a lease: another executor naming it learns
    // nothing but that it is not its own.
    if (lease == nullptr || lease->lease_id != ref.lease_id() ||
        lease->executor != request.executor_id()) {
      *response.add_revoked() = ref;
      continue;
    }
    leases_.Extend(*task, deadline);
  }
  response.set_lease_deadline_unix_ms(absl::ToUnixMillis(deadline));
  return response;
}

absl::Status Core::ExpireLease(int64_t task_rowid, const std::string& why) {
  PTXB_ASSIGN_OR_RETURN(TaskRow task, tasks_.Read(task_rowid));
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, trajectories_.Read(task.trajectory));
  const std::string executor = leases_.Find(task_rowid)->executor;
  counters_.leases_expired.fetch_add(1, std::memory_order_relaxed);
  ++task.deaths;
  task.last_error = absl::StrCat(why, " (executor ", executor, ")");
  if (task.kind == StepKind::kAgent) {
    return EndOrRerunSession(task, trajectory, v1::INFRA,
                             absl::StrCat("the gateway running it: ", task.last_error),
                             TaskEvent::kPoison);
  }
  if (task.deaths >= options_.max_executor_deaths) {
    PTXB_RETURN_IF_ERROR(TransitTask(task, trajectory.model, TaskEvent::kPoison));
    PTXB_RETURN_IF_ERROR(AddEvent(trajectory.experiment_id, trajectory.id, task.turn,
                                  "task.poisoned", task.last_error));
    return Transit(trajectory, TrajectoryEvent::kFail,
                   absl::StrCat("poisoned: the executors holding this ",
                                task.kind == StepKind::kLlm ? "LLM" : "eval", " step died ",
                                task.deaths, " times; last: ", task.last_error),
                   v1::INFRA);
  }
  const absl::Time not_before = clock_->Now() + Backoff(task.deaths);
  PTXB_RETURN_IF_ERROR(TransitTask(task, trajectory.model, TaskEvent::kBackOff, not_before));
  return AddEvent(trajectory.experiment_id, trajectory.id, task.turn, "task.expired",
                  task.last_error);
}

absl::StatusOr<int> Core::Leave(const std::string& executor_id) {
  AssertOnWriterThread();
  Executor* executor = executors_.Find(executor_id);
  if (executor == nullptr) return 0;
  executor->info.set_last_seen_unix_ms(absl::ToUnixMillis(clock_->Now()));
  PTXB_RETURN_IF_ERROR(executors_.MarkStopped(executor_id));
  // Copied: each transition erases its task from executor->tasks.
  const std::set<int64_t> held = executor->tasks;
  for (int64_t rowid : held) {
    PTXB_ASSIGN_OR_RETURN(TaskRow task, tasks_.Read(rowid));
    PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, trajectories_.Read(task.trajectory));
    if (task.kind == StepKind::kAgent) {
      // A session that evaluated something cannot be run again from where
      // it stood; one that evaluated nothing is run again like any task.
      PTXB_ASSIGN_OR_RETURN(const int turns, turns_.Count(trajectory.rowid));
      if (turns > 0) {
        PTXB_RETURN_IF_ERROR(EndOrRerunSession(
            task, trajectory, v1::INFRA,
            absl::StrCat("gateway ", executor_id, " left while running the session"),
            TaskEvent::kFail));
        continue;
      }
    }
    // No death and no back-off: the executor left cleanly; the work was lost
    // on the way (its answer to a cancelled poll) or never accepted.
    PTXB_RETURN_IF_ERROR(TransitTask(task, trajectory.model, TaskEvent::kBackOff, clock_->Now()));
    PTXB_RETURN_IF_ERROR(AddEvent(trajectory.experiment_id, trajectory.id, task.turn,
                                  "task.released",
                                  absl::StrCat("executor ", executor_id, " left holding it")));
  }
  return static_cast<int>(held.size());
}

absl::Status Core::Tick() {
  AssertOnWriterThread();
  const absl::Time now = clock_->Now();
  while (std::optional<LeaseTable::Due> due = leases_.PopDue(now)) {
    PTXB_RETURN_IF_ERROR(ExpireLease(due->task, due->past_attempt_limit
                                                    ? "attempt ran past its time limit"
                                                    : "lease expired without heartbeat"));
  }
  while (!delayed_.empty() && delayed_.top().at <= now) {
    const int64_t task = delayed_.top().task;
    delayed_.pop();
    auto it = delayed_refs_.find(task);
    if (it == delayed_refs_.end()) continue;  // cancelled meanwhile
    PushReady(task, it->second);
    delayed_refs_.erase(it);
  }
  return absl::OkStatus();
}

absl::Status Core::Load() {
  AssertOnWriterThread();
  const absl::Time now = clock_->Now();
  PTXB_RETURN_IF_ERROR(DeleteStagedExperiments());
  PTXB_RETURN_IF_ERROR(experiment_rows_.ForEach([&](const ExperimentRow& e) {
    experiments_[e.rowid] = e;
    llm_ready_.SetWeight(e.rowid, e.priority);
    eval_ready_.SetWeight(e.rowid, e.priority);
    agent_ready_.SetWeight(e.rowid, e.priority);
  }));
  PTXB_RETURN_IF_ERROR(executors_.Load(now));
  return tasks_.ForEachLive([&](const LiveTask& t) {
    const bool triton =
        t.kind == StepKind::kEval && EvalRunsAsTriton(t.experiment, t.trajectory, t.turn);
    ReadyRef ref{t.experiment, t.kind, RouteKey(t.experiment, t.kind, t.model, triton)};
    if (t.state == TaskState::kQueued) {
      absl::Time not_before = absl::FromUnixMillis(t.not_before_ms);
      if (not_before > now) {
        PushDelayed(t.rowid, ref, not_before);
      } else {
        PushReady(t.rowid, ref);
      }
      return;
    }
    Lease lease;
    lease.lease_id = t.lease_id;
    lease.executor = t.executor;
    lease.experiment = ref.experiment;
    lease.kind = ref.kind;
    lease.route_key = ref.route_key;
    TaskRow attempt_of;
    attempt_of.kind = t.kind;
    attempt_of.experiment = t.experiment;
    lease.attempt_limit = AttemptLimit(attempt_of, now);
    lease.deadline = std::max(absl::FromUnixMillis(t.lease_deadline_ms), now + options_.lease_ttl);
    executors_.Holder(lease.executor).tasks.insert(t.rowid);
    leases_.Add(t.rowid, std::move(lease));
  });
}

}  // namespace ptxbench::scheduler
