// Core: client operations (submit, cancel, retry, extend) and executor
// registration. Transitions are applied in core_transit.cc, leasing is in
// core_lease.cc, completions in core_complete.cc.
#include "scheduler/state/core.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "experiment_spec/limits.h"
#include "nlohmann/json.hpp"
#include "scheduler/store/event_log.h"
#include "storage/blob_store.h"

namespace ptxbench::scheduler {

using experiment_spec::ExpandedExperiment;
using experiment_spec::RenderedPrompts;

namespace v1 = ::ptxbench::v1;

Core::Core(storage::Database* db, Clock* clock, CoreOptions options)
    : clock_(clock),
      db_(db),
      options_(std::move(options)),
      tasks_(db),
      trajectories_(db),
      experiment_rows_(db),
      turns_(db),
      tokens_(db),
      stage_manifests_(db),
      payloads_(db, &turns_),
      executors_(db, ExecutorRegistry::Options{
                         options_.lease_ttl, options_.heartbeat_interval,
                         // An idle executor is seen only when its long poll
                         // comes back: three heartbeats more than that.
                         options_.max_lease_wait + 3 * options_.heartbeat_interval}) {}

Core::~Core() = default;

void Core::BindToWriterThread(const storage::WriteQueue* queue) { writer_ = queue; }

void Core::AssertOnWriterThread() const {
  if (writer_ == nullptr || writer_->OnWriterThread()) return;
  // Core is not thread-safe: a call from another thread races the writer.
  LogError("scheduler Core called off the writer thread; aborting", {});
  std::abort();
}

int64_t Core::ReadyCount() const {
  AssertOnWriterThread();
  return llm_ready_.size() + eval_ready_.size() + agent_ready_.size();
}

int64_t Core::AgentEvalGeneration() const {
  AssertOnWriterThread();
  return agent_eval_generation_;
}

int64_t Core::ReadyGeneration() const {
  AssertOnWriterThread();
  return ready_generation_;
}

absl::Status Core::AddEvent(const std::string& experiment, const std::string& trajectory,
                            int turn, const std::string& kind, const std::string& detail) {
  EventRecord e;
  e.unix_ms = absl::ToUnixMillis(clock_->Now());
  e.experiment = experiment;
  e.trajectory = trajectory;
  e.turn = turn;
  e.kind = kind;
  e.detail = detail;
  return AppendEvent(*db_, e);
}

bool Core::HasActiveGpuWorker(
    const std::vector<std::string>& architectures,
    const std::function<bool(const v1::Capabilities&)>& can) const {
  const absl::Time now = clock_->Now();
  for (const auto& [id, e] : executors_.all()) {
    const v1::Capabilities& caps = e.info.capabilities();
    if (e.info.kind() == v1::WORKER && HasHealthyGpuOf(caps, architectures) &&
        executors_.Status(e, now) == "active" && can(caps)) {
      return true;
    }
  }
  return false;
}

absl::Status Core::CheckPyTorchReferences(const ExpandedExperiment& x) const {
  if (x.pytorch_references.empty()) return absl::OkStatus();
  // A full evaluation goes to a worker with a healthy GPU of its
  // architectures (PopFor). A real one runs PyTorch references when it
  // registered a Python with torch; a simulated one computes no reference,
  // so it takes any definition.
  if (HasActiveGpuWorker(x.architectures, [](const v1::Capabilities& caps) {
        return caps.simulated() || !caps.torch_reference().empty();
      })) {
    return absl::OkStatus();
  }
  const auto& [definition, why] = *x.pytorch_references.begin();
  return absl::FailedPreconditionError(absl::StrCat(
      "definition ", definition, " has no native reference (", why,
      ") and no registered GPU worker can run its PyTorch reference: start a worker with "
      "--torch-python PATH (a Python with torch and CUDA)"));
}

absl::Status Core::CheckProfilers(const ExpandedExperiment& x) const {
  if (!x.profile || HasActiveGpuWorker(x.architectures, CanProfile)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "experiment '", x.name, "' asks for profiles, and no registered GPU worker of its "
      "architectures can profile (`ptxbench workers` says why each cannot); nothing was "
      "created"));
}

absl::Status Core::CheckSanitizers(const ExpandedExperiment& x) const {
  if (!x.memcheck || HasActiveGpuWorker(x.architectures, CanMemcheck)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "experiment '", x.name, "' asks for the memcheck gate (\"memcheck\": true, the default "
      "of PTXBench's configs), and no registered GPU worker of its architectures has "
      "compute-sanitizer (`ptxbench workers` says why each has none; \"memcheck\": false "
      "turns the gate off); nothing was created"));
}

absl::Status Core::CheckTriton(const ExpandedExperiment& x) const {
  // A compile-only evaluation needs no Triton: any worker checks the
  // module's shape (RouteKey).
  if (x.language != "triton" || x.eval_mode == v1::COMPILE_ONLY) return absl::OkStatus();
  const bool profile = x.profile;
  if (HasActiveGpuWorker(x.architectures, [profile](const v1::Capabilities& caps) {
        return CanRunTriton(caps) && (!profile || CanProfile(caps));
      })) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "experiment '", x.name, "' is in Triton (\"language\": \"triton\"), and no registered "
      "GPU worker of its architectures runs Triton", profile ? " and profiles" : "",
      ": start a worker with --torch-python PATH (a Python with torch, Triton and CUDA)",
      profile ? " and --ncu PATH" : "",
      "; `ptxbench workers` shows each worker's Triton; nothing was created"));
}

absl::Status Core::CheckAgentClis(const ExpandedExperiment& x) const {
  if (!x.agent) return absl::OkStatus();
  const absl::Time now = clock_->Now();
  for (const auto& [id, e] : executors_.all()) {
    const v1::Capabilities& caps = e.info.capabilities();
    if (e.info.kind() != v1::GATEWAY || caps.agent_slots() <= 0 ||
        executors_.Status(e, now) != "active") {
      continue;
    }
    for (const v1::AgentCliInstall& cli : caps.agent_clis()) {
      if (cli.name() == x.agent->cli && cli.version() == x.agent->cli_version) {
        return absl::OkStatus();
      }
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "experiment '", x.name, "' is in agent mode with ", x.agent->cli, " ",
      x.agent->cli_version, ", and no registered gateway runs sessions of that CLI; nothing "
      "was created"));
}

absl::StatusOr<int64_t> Core::ExperimentRowid(const std::string& experiment_id) const {
  for (const auto& [rowid, info] : experiments_) {
    if (info.id == experiment_id) return rowid;
  }
  return absl::NotFoundError(absl::StrCat("unknown experiment '", experiment_id, "'"));
}

absl::StatusOr<std::string> Core::SubmitEval(const ExpandedExperiment& x,
                                             const RenderedPrompts& prompts,
                                             const std::string& answer) {
  AssertOnWriterThread();
  if (x.trajectories.size() != 1 || x.trajectories[0].num_turns != 1 || x.agent) {
    return absl::InvalidArgumentError("a one-off evaluation is one trajectory of one turn");
  }
  PTXB_ASSIGN_OR_RETURN(SubmitOutcome outcome, Submit(x, prompts));
  if (!outcome.created) {
    return absl::AlreadyExistsError(absl::StrCat("evaluation ", x.name, " already exists"));
  }
  const std::string& id = x.trajectories[0].trajectory_id;
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, trajectories_.ReadById(id));
  PTXB_ASSIGN_OR_RETURN(const int64_t task_rowid, tasks_.FirstOf(trajectory.rowid));
  PTXB_ASSIGN_OR_RETURN(TaskRow task, tasks_.Read(task_rowid));
  // The model step is answered here, by the file; its queue entry is skipped
  // when popped (the task is no longer queued).
  v1::LlmResponse response;
  response.set_text(answer);
  response.set_provider("file");
  response.set_finish_reason("stop");
  PTXB_RETURN_IF_ERROR(CompleteLlm(task, TaskEvent::kAnswerByFile, trajectory, response));
  return id;
}

absl::StatusOr<int64_t> Core::CancelTrajectory(const std::string& trajectory_id) {
  AssertOnWriterThread();
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow t, trajectories_.ReadById(trajectory_id));
  if (IsTerminal(t.state)) return 0;
  PTXB_RETURN_IF_ERROR(Transit(t, TrajectoryEvent::kCancel, "cancelled by user"));
  return 1;
}

namespace {

// A change in parts, run whole.
absl::StatusOr<int64_t> Whole(const std::function<absl::Status(WritePart&)>& part) {
  WritePart p;
  while (!p.done) PTXB_RETURN_IF_ERROR(part(p));
  return p.changed;
}

}  // namespace

absl::StatusOr<int64_t> Core::CancelExperiment(const std::string& experiment_id) {
  return Whole([&](WritePart& p) { return CancelExperiment(experiment_id, 1000, p); });
}

absl::StatusOr<int64_t> Core::Retry(const std::string& experiment_id, v1::RetryScope scope) {
  return Whole([&](WritePart& p) { return Retry(experiment_id, scope, 1000, p); });
}

absl::StatusOr<int64_t> Core::Extend(const std::string& experiment_id, int num_turns) {
  return Whole([&](WritePart& p) { return Extend(experiment_id, num_turns, 1000, p); });
}

absl::Status Core::CancelExperiment(const std::string& experiment_id, int max, WritePart& part) {
  AssertOnWriterThread();
  PTXB_ASSIGN_OR_RETURN(int64_t exp, ExperimentRowid(experiment_id));
  part.started = true;
  // A cancelled trajectory leaves the live states: each part takes the
  // first ones left.
  int64_t left = max;
  for (v1::TrajectoryState live : {v1::AWAITING_MODEL, v1::AWAITING_EVAL, v1::AWAITING_AGENT}) {
    PTXB_ASSIGN_OR_RETURN(std::vector<int64_t> rowids,
                          trajectories_.InState(exp, live, /*after=*/0, left));
    for (int64_t rowid : rowids) {
      PTXB_ASSIGN_OR_RETURN(TrajectoryRow t, trajectories_.Read(rowid));
      PTXB_RETURN_IF_ERROR(Transit(t, TrajectoryEvent::kCancel, "cancelled by user"));
      ++part.changed;
    }
    left -= static_cast<int64_t>(rowids.size());
    if (left <= 0) break;
  }
  part.done = left > 0;
  // Their queue entries would be skipped when popped; dropping them now
  // keeps the queues short.
  llm_ready_.RemoveExperiment(exp);
  eval_ready_.RemoveExperiment(exp);
  agent_ready_.RemoveExperiment(exp);
  if (!part.done) return absl::OkStatus();
  return AddEvent(experiment_id, "", -1, "experiment.cancelled",
                  absl::StrCat(part.changed, " trajectories cancelled"));
}

absl::Status Core::Retry(const std::string& experiment_id, v1::RetryScope scope, int max,
                         WritePart& part) {
  AssertOnWriterThread();
  PTXB_ASSIGN_OR_RETURN(int64_t exp, ExperimentRowid(experiment_id));
  std::optional<v1::FailureClass> only;  // nullopt: every failure class
  switch (scope) {
    case v1::RETRY_INFRA: only = v1::INFRA; break;
    case v1::RETRY_API: only = v1::MODEL_API; break;
    case v1::RETRY_ALL_FAILED: break;
    default: return absl::InvalidArgumentError("retry needs a scope: infra, api or all");
  }
  part.started = true;
  // Some FAILED trajectories stay so: the next part starts after the last seen.
  PTXB_ASSIGN_OR_RETURN(std::vector<int64_t> failed,
                        trajectories_.InState(exp, v1::FAILED, part.after, max));
  part.done = static_cast<int64_t>(failed.size()) < max;
  for (int64_t rowid : failed) {
    part.after = rowid;
    PTXB_ASSIGN_OR_RETURN(TrajectoryRow t, trajectories_.Read(rowid));
    if (only && t.failure_class != *only) continue;
    PTXB_ASSIGN_OR_RETURN(std::optional<int64_t> last, tasks_.LastEndedOf(rowid));
    if (!last) continue;  // nothing to resume from
    PTXB_ASSIGN_OR_RETURN(TaskRow task, tasks_.Read(*last));
    TrajectoryEvent event = task.kind == StepKind::kLlm ? TrajectoryEvent::kRetryLlm
                                                        : TrajectoryEvent::kRetryEval;
    if (experiments_.at(exp).agent) {
      // A new session would mix with the evaluations of the one that ended:
      // only a trajectory whose sessions evaluated nothing is run again.
      PTXB_ASSIGN_OR_RETURN(const int turns, turns_.Count(rowid));
      if (turns > 0 || task.kind != StepKind::kAgent) continue;
      event = TrajectoryEvent::kRetryAgent;
    }
    PTXB_RETURN_IF_ERROR(Transit(t, event, v1::RetryScope_Name(scope)));
    ++part.changed;
  }
  return absl::OkStatus();
}

absl::Status Core::Extend(const std::string& experiment_id, int num_turns, int max,
                          WritePart& part) {
  AssertOnWriterThread();
  PTXB_ASSIGN_OR_RETURN(int64_t exp, ExperimentRowid(experiment_id));
  if (!part.started) {
    if (experiments_.at(exp).agent) {
      return absl::InvalidArgumentError(absl::StrCat(
          "experiment ", experiment_id, " is in agent mode: its sessions are limited by "
          "agent.max_evaluations and its budgets, not by turns; extend applies to the "
          "multiturn loop"));
    }
    PTXB_ASSIGN_OR_RETURN(const int current, experiment_rows_.NumTurns(exp));
    if (num_turns <= current || num_turns > experiment_spec::kMaxTurns) {
      return absl::InvalidArgumentError(
          absl::StrCat("--turns ", num_turns, ": must be above the current limit of ", current,
                       " and at most ", experiment_spec::kMaxTurns));
    }
    PTXB_RETURN_IF_ERROR(experiment_rows_.SetNumTurns(exp, num_turns));
    part.started = true;
  }
  // Every trajectory's limit is raised, the next `max` of them by rowid;
  // those that had reached the old one resume.
  PTXB_ASSIGN_OR_RETURN(const int64_t last,
                        trajectories_.RaiseNumTurns(exp, num_turns, part.after, max));
  part.done = last == 0;
  if (part.done) return absl::OkStatus();
  PTXB_ASSIGN_OR_RETURN(std::vector<int64_t> resumable,
                        trajectories_.InState(exp, v1::LIMITS_EXCEEDED, part.after, max, last));
  part.after = last;
  for (int64_t rowid : resumable) {
    PTXB_ASSIGN_OR_RETURN(TrajectoryRow t, trajectories_.Read(rowid));
    PTXB_RETURN_IF_ERROR(
        Transit(t, TrajectoryEvent::kExtend, absl::StrCat("num_turns=", num_turns)));
    ++part.changed;
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::RegisterResponse> Core::Register(const v1::RegisterRequest& request,
                                                     const std::string& owner) {
  AssertOnWriterThread();
  return executors_.Register(request, owner, clock_->Now());
}

TokenStore& Core::tokens() {
  AssertOnWriterThread();
  return tokens_;
}

StageManifestStore& Core::stage_manifests() {
  AssertOnWriterThread();
  return stage_manifests_;
}

absl::StatusOr<v1::TokenInfo> Core::RevokeToken(const std::string& name, int64_t now_ms) {
  AssertOnWriterThread();
  PTXB_ASSIGN_OR_RETURN(v1::TokenInfo info, tokens_.Revoke(name, now_ms));
  executors_.OwnerRevoked(name);
  return info;
}

absl::Status Core::CheckOwner(const std::string& executor_id, const std::string& owner) const {
  AssertOnWriterThread();
  return executors_.CheckOwner(executor_id, owner);
}

absl::Status Core::Drain(const std::string& executor_id) {
  AssertOnWriterThread();
  return executors_.Drain(executor_id);
}

bool Core::IsDraining(const std::string& executor_id) const {
  AssertOnWriterThread();
  return executors_.IsDraining(executor_id);
}

bool Core::IsKnownExecutor(const std::string& executor_id) const {
  AssertOnWriterThread();
  return executors_.IsKnown(executor_id);
}

absl::StatusOr<std::vector<v1::ExecutorInfo>> Core::ListExecutors() {
  AssertOnWriterThread();
  std::vector<v1::ExecutorInfo> list = executors_.List(clock_->Now());
  for (v1::ExecutorInfo& info : list) {
    const Executor* executor = executors_.Find(info.executor_id());
    for (int64_t rowid : executor->tasks) {
      const Lease* lease = leases_.Find(rowid);
      if (lease == nullptr) continue;  // never: both change in ReleaseLease
      // The lease in memory knows the executor and deadline; which
      // trajectory and turn it serves is in the task's and trajectory's rows.
      PTXB_ASSIGN_OR_RETURN(TaskRow task, tasks_.Read(rowid));
      PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, trajectories_.Read(task.trajectory));
      v1::HeldTask* held = info.add_held();
      held->set_task_id(FormatTaskId(rowid));
      held->set_kind(static_cast<v1::TaskKind>(task.kind));
      held->set_experiment_id(trajectory.experiment_id);
      held->set_trajectory_id(trajectory.id);
      held->set_turn(task.turn);
      held->set_attempt(task.attempt);
      held->set_model(trajectory.model);
      held->set_definition(trajectory.definition);
      held->set_lease_deadline_unix_ms(absl::ToUnixMillis(lease->deadline));
    }
  }
  return list;
}

}  // namespace ptxbench::scheduler
