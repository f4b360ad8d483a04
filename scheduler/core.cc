// Core: client operations (submit, cancel, retry, extend) and the executor
// registry. Leasing is in core_lease.cc, completions in core_complete.cc.
#include "scheduler/core.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "scheduler/core_rows.h"
#include "storage/blob_store.h"
#include "storage/event_log.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

std::string TaskPromptKey(const TrajectorySpec& t) {
  return absl::StrFormat("%s|%.6g|%d|%s|%s", t.definition, t.target_speedup, t.num_turns,
                         EncodeWorkloads(t.workloads), t.repair_sha256);
}

Core::Core(storage::Database* db, Clock* clock, CoreOptions options)
    : clock_(clock), db_(db), options_(std::move(options)) {
  absl::BitGen gen;
  lease_salt_ = absl::Uniform<uint64_t>(gen);
}

Core::~Core() = default;

absl::Status Core::AddEvent(const std::string& experiment, const std::string& trajectory,
                            int turn, const std::string& kind, const std::string& detail) {
  storage::EventRecord e;
  e.unix_ms = absl::ToUnixMillis(clock_->Now());
  e.experiment = experiment;
  e.trajectory = trajectory;
  e.turn = turn;
  e.kind = kind;
  e.detail = detail;
  return storage::AppendEvent(*db_, e);
}

std::string Core::ExecutorStatus(const Executor& e) const {
  const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
  const int64_t lost_after = absl::ToInt64Milliseconds(options_.max_lease_wait +
                                                       3 * options_.heartbeat_interval);
  if (now_ms - e.info.last_seen_unix_ms() > lost_after) return "lost";
  return e.info.draining() ? "draining" : "active";
}

absl::Status Core::CheckPyTorchReferences(const ExpandedExperiment& x) const {
  if (x.pytorch_references.empty()) return absl::OkStatus();
  // A full evaluation goes to a worker with a healthy GPU (PopFor). A real
  // one runs PyTorch references when it registered a Python with torch; a
  // simulated one computes no reference, so it takes any definition.
  for (const auto& [id, e] : executors_) {
    const v1::Capabilities& caps = e.info.capabilities();
    if (e.info.kind() == v1::WORKER && HasHealthyGpu(caps) && ExecutorStatus(e) == "active" &&
        (caps.simulated() || !caps.torch_reference().empty())) {
      return absl::OkStatus();
    }
  }
  const auto& [definition, why] = *x.pytorch_references.begin();
  return absl::FailedPreconditionError(absl::StrCat(
      "definition ", definition, " has no native reference (", why,
      ") and no registered GPU worker can run its PyTorch reference: start a worker with "
      "--torch-python PATH (a Python with torch and CUDA)"));
}

absl::StatusOr<int64_t> Core::ExperimentRowid(const std::string& experiment_id) const {
  for (const auto& [rowid, info] : experiments_) {
    if (info.id == experiment_id) return rowid;
  }
  return absl::NotFoundError(absl::StrCat("unknown experiment '", experiment_id, "'"));
}

absl::StatusOr<SubmitOutcome> Core::Submit(const ExpandedExperiment& x,
                                           const RenderedPrompts& prompts) {
  const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
  {
    PTXB_ASSIGN_OR_RETURN(
        storage::Statement * s,
        db_->Cached("SELECT e.id, e.spec_hash, (SELECT count(*) FROM trajectories j "
                    "WHERE j.experiment = e.rowid) FROM experiments e WHERE e.name = ?"));
    s->BindText(1, x.name);
    PTXB_ASSIGN_OR_RETURN(bool exists, s->Step());
    if (exists) {
      SubmitOutcome same{s->ColumnText(0), false, s->ColumnInt64(2)};
      bool same_spec = s->ColumnText(1) == x.spec_hash;
      s->Reset();
      if (!same_spec) {
        return absl::AlreadyExistsError(absl::StrCat(
            "experiment '", x.name, "' already exists with a different spec; ",
            "submit under another name (--name) or cancel the old one"));
      }
      return same;
    }
  }
  // Refused before anything is written, and before any model is called.
  PTXB_RETURN_IF_ERROR(CheckPyTorchReferences(x));
  // Every prompt must be rendered before anything is written.
  std::map<std::string, std::string> system_hash, task_hash;
  int max_turns = 0;
  for (const TrajectorySpec& t : x.trajectories) {
    max_turns = std::max(max_turns, t.num_turns);
    if (!system_hash.count(t.prompt_tag)) {
      auto it = prompts.system_by_tag.find(t.prompt_tag);
      if (it == prompts.system_by_tag.end()) {
        return absl::InternalError(absl::StrCat("no rendered system prompt for ", t.prompt_tag));
      }
      system_hash[t.prompt_tag] = "";
    }
    std::string key = TaskPromptKey(t);
    if (!task_hash.count(key)) {
      if (!prompts.task_by_key.count(key)) {
        return absl::InternalError(absl::StrCat("no rendered task prompt for ", key));
      }
      task_hash[key] = "";
    }
  }
  for (auto& [tag, hash] : system_hash) {
    PTXB_ASSIGN_OR_RETURN(hash, storage::PutBlob(*db_, prompts.system_by_tag.at(tag)));
  }
  for (auto& [key, hash] : task_hash) {
    PTXB_ASSIGN_OR_RETURN(hash, storage::PutBlob(*db_, prompts.task_by_key.at(key)));
  }

  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * ins_exp,
      db_->Cached("INSERT INTO experiments(id, name, spec_hash, spec_json, priority, "
                  "eval_mode, language, context_policy, max_cost_usd, num_turns, "
                  "created_ms) VALUES(?,?,?,?,?,?,?,?,?,?,?)"));
  ins_exp->BindText(1, x.experiment_id)
      .BindText(2, x.name)
      .BindText(3, x.spec_hash)
      .BindText(4, x.normalized_json)
      .BindInt64(5, x.priority)
      .BindInt64(6, x.eval_mode)
      .BindText(7, x.language)
      .BindText(8, x.context_policy)
      .BindDouble(9, x.max_cost_usd)
      .BindInt64(10, max_turns)
      .BindInt64(11, now_ms);
  PTXB_RETURN_IF_ERROR(ins_exp->Run());
  const int64_t exp_rowid = db_->LastInsertRowId();

  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * ins_traj,
      db_->Cached("INSERT INTO trajectories(id, experiment, model, definition, "
                  "prompt_tag, sample, num_turns, target_speedup, state, system_blob, "
                  "task_blob, updated_ms, workloads) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * ins_task,
      db_->Cached("INSERT INTO tasks(experiment, trajectory, turn, kind, state, "
                  "created_ms) VALUES(?,?,0,?,0,?)"));
  std::vector<std::pair<int64_t, const std::string*>> queued;
  queued.reserve(x.trajectories.size());
  for (const TrajectorySpec& t : x.trajectories) {
    ins_traj->BindText(1, t.trajectory_id)
        .BindInt64(2, exp_rowid)
        .BindText(3, t.model)
        .BindText(4, t.definition)
        .BindText(5, t.prompt_tag)
        .BindInt64(6, t.sample_index)
        .BindInt64(7, t.num_turns)
        .BindDouble(8, t.target_speedup)
        .BindInt64(9, v1::AWAITING_MODEL)
        .BindText(10, system_hash[t.prompt_tag])
        .BindText(11, task_hash[TaskPromptKey(t)])
        .BindInt64(12, now_ms)
        .BindText(13, EncodeWorkloads(t.workloads));
    PTXB_RETURN_IF_ERROR(ins_traj->Run());
    ins_task->BindInt64(1, exp_rowid)
        .BindInt64(2, db_->LastInsertRowId())
        .BindInt64(3, static_cast<int>(StepKind::kLlm))
        .BindInt64(4, now_ms);
    PTXB_RETURN_IF_ERROR(ins_task->Run());
    queued.emplace_back(db_->LastInsertRowId(), &t.model);
  }
  PTXB_RETURN_IF_ERROR(AddEvent(
      x.experiment_id, "", -1, "experiment.submitted",
      absl::StrCat(x.trajectories.size(), " trajectories, priority ", x.priority)));

  // Memory changes only after every write succeeded.
  ExperimentInfo info;
  info.id = x.experiment_id;
  info.language = x.language;
  info.context_policy = x.context_policy;
  info.eval_mode = x.eval_mode;
  info.priority = x.priority;
  info.max_cost_usd = x.max_cost_usd;
  experiments_[exp_rowid] = info;
  llm_ready_.SetWeight(exp_rowid, x.priority);
  eval_ready_.SetWeight(exp_rowid, x.priority);
  for (const auto& [task, model] : queued) {
    PushReady(task, ReadyRef{exp_rowid, StepKind::kLlm, *model});
  }
  return SubmitOutcome{x.experiment_id, true, static_cast<int64_t>(x.trajectories.size())};
}

absl::StatusOr<std::string> Core::SubmitEval(const ExpandedExperiment& x,
                                             const RenderedPrompts& prompts,
                                             const std::string& answer) {
  if (x.trajectories.size() != 1 || x.trajectories[0].num_turns != 1) {
    return absl::InvalidArgumentError("a one-off evaluation is one trajectory of one turn");
  }
  PTXB_ASSIGN_OR_RETURN(SubmitOutcome outcome, Submit(x, prompts));
  if (!outcome.created) {
    return absl::AlreadyExistsError(absl::StrCat("evaluation ", x.name, " already exists"));
  }
  const std::string& id = x.trajectories[0].trajectory_id;
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, ReadTrajectoryById(*db_, id));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT rowid FROM tasks WHERE trajectory = ? AND turn = 0"));
  s->BindInt64(1, trajectory.rowid);
  PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) return absl::InternalError(absl::StrCat("no first task for ", id));
  const int64_t task_rowid = s->ColumnInt64(0);
  s->Reset();
  PTXB_ASSIGN_OR_RETURN(TaskRow task, ReadTask(*db_, task_rowid));
  // The model step is answered here, by the file; its queue entry is skipped
  // when popped (the task is no longer queued).
  v1::LlmResponse response;
  response.set_text(answer);
  response.set_provider("file");
  response.set_finish_reason("stop");
  PTXB_RETURN_IF_ERROR(CompleteLlm(task, trajectory, response));
  return id;
}

absl::StatusOr<int64_t> Core::CancelTrajectory(const std::string& trajectory_id) {
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow t, ReadTrajectoryById(*db_, trajectory_id));
  if (IsTerminal(t.state)) return 0;
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT rowid FROM tasks WHERE trajectory = ? AND state IN (0, 1)"));
  s->BindInt64(1, t.rowid);
  std::vector<int64_t> live;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    live.push_back(s->ColumnInt64(0));
  }
  s->Reset();
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * cancel,
      db_->Cached("UPDATE tasks SET state = 5 WHERE trajectory = ? AND state IN (0, 1)"));
  cancel->BindInt64(1, t.rowid);
  PTXB_RETURN_IF_ERROR(cancel->Run());
  PTXB_RETURN_IF_ERROR(
      EndTrajectory(t, v1::CANCELLED, v1::FAILURE_CLASS_UNSPECIFIED, "cancelled by user"));
  // Queued entries in the fair queues are skipped lazily when popped.
  for (int64_t task : live) {
    ReleaseLease(task);
    delayed_refs_.erase(task);
  }
  return 1;
}

absl::StatusOr<int64_t> Core::CancelExperiment(const std::string& experiment_id) {
  PTXB_ASSIGN_OR_RETURN(int64_t exp, ExperimentRowid(experiment_id));
  const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * tasks,
      db_->Cached("UPDATE tasks SET state = 5 WHERE experiment = ? AND state IN (0, 1)"));
  tasks->BindInt64(1, exp);
  PTXB_RETURN_IF_ERROR(tasks->Run());
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * trajs,
      db_->Cached("UPDATE trajectories SET state = ?, reason = 'cancelled by user', "
                  "updated_ms = ? WHERE experiment = ? AND state IN (?, ?)"));
  trajs->BindInt64(1, v1::CANCELLED)
      .BindInt64(2, now_ms)
      .BindInt64(3, exp)
      .BindInt64(4, v1::AWAITING_MODEL)
      .BindInt64(5, v1::AWAITING_EVAL);
  PTXB_RETURN_IF_ERROR(trajs->Run());
  const int64_t cancelled = db_->Changes();
  PTXB_RETURN_IF_ERROR(AddEvent(experiment_id, "", -1, "experiment.cancelled",
                                absl::StrCat(cancelled, " trajectories cancelled")));
  std::vector<int64_t> held;
  for (const auto& [task, lease] : leases_) {
    if (lease.experiment == exp) held.push_back(task);
  }
  for (int64_t task : held) ReleaseLease(task);
  for (auto it = delayed_refs_.begin(); it != delayed_refs_.end();) {
    it = it->second.experiment == exp ? delayed_refs_.erase(it) : std::next(it);
  }
  llm_ready_.RemoveExperiment(exp);
  eval_ready_.RemoveExperiment(exp);
  return cancelled;
}

absl::StatusOr<int64_t> Core::Retry(const std::string& experiment_id, v1::RetryScope scope) {
  PTXB_ASSIGN_OR_RETURN(int64_t exp, ExperimentRowid(experiment_id));
  int64_t klass = 0;
  switch (scope) {
    case v1::RETRY_INFRA: klass = v1::INFRA; break;
    case v1::RETRY_API: klass = v1::MODEL_API; break;
    case v1::RETRY_ALL_FAILED: klass = -1; break;
    default: return absl::InvalidArgumentError("retry needs a scope: infra, api or all");
  }
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT rowid FROM trajectories WHERE experiment = ? AND state = ? "
                  "AND (? < 0 OR failure_class = ?)"));
  s->BindInt64(1, exp).BindInt64(2, v1::FAILED).BindInt64(3, klass).BindInt64(4, klass);
  std::vector<int64_t> failed;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    failed.push_back(s->ColumnInt64(0));
  }
  s->Reset();
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * last,
      db_->Cached("SELECT rowid FROM tasks WHERE trajectory = ? AND state IN (3, 4) "
                  "ORDER BY rowid DESC LIMIT 1"));
  int64_t retried = 0;
  for (int64_t rowid : failed) {
    PTXB_ASSIGN_OR_RETURN(TrajectoryRow t, ReadTrajectory(*db_, rowid));
    last->BindInt64(1, rowid);
    PTXB_ASSIGN_OR_RETURN(bool has_task, last->Step());
    int64_t task_rowid = has_task ? last->ColumnInt64(0) : 0;
    last->Reset();
    if (!has_task) continue;  // nothing to resume from
    PTXB_ASSIGN_OR_RETURN(TaskRow task, ReadTask(*db_, task_rowid));
    task.state = TaskState::kQueued;
    task.deaths = task.infra_failures = task.api_failures = 0;
    PTXB_RETURN_IF_ERROR(WriteTaskState(*db_, task, 0));
    t.state = task.kind == StepKind::kLlm ? v1::AWAITING_MODEL : v1::AWAITING_EVAL;
    t.failure_class = v1::FAILURE_CLASS_UNSPECIFIED;
    t.reason.clear();
    PTXB_RETURN_IF_ERROR(WriteTrajectory(*db_, t, absl::ToUnixMillis(clock_->Now())));
    PTXB_RETURN_IF_ERROR(AddEvent(t.experiment_id, t.id, task.turn, "trajectory.retried",
                                  v1::RetryScope_Name(scope)));
    PushReady(task_rowid, ReadyRef{exp, task.kind, RouteKey(exp, task.kind, t.model)});
    ++retried;
  }
  return retried;
}

absl::StatusOr<int64_t> Core::Extend(const std::string& experiment_id, int num_turns) {
  PTXB_ASSIGN_OR_RETURN(int64_t exp, ExperimentRowid(experiment_id));
  PTXB_ASSIGN_OR_RETURN(storage::Statement * cur,
                        db_->Cached("SELECT num_turns FROM experiments WHERE rowid = ?"));
  cur->BindInt64(1, exp);
  PTXB_ASSIGN_OR_RETURN(bool found, cur->Step());
  const int64_t current = found ? cur->ColumnInt64(0) : 0;
  cur->Reset();
  if (num_turns <= current || num_turns > 1000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--turns ", num_turns, ": must be above the current limit of ", current,
        " and at most 1000"));
  }
  PTXB_ASSIGN_OR_RETURN(storage::Statement * up,
                        db_->Cached("UPDATE experiments SET num_turns = ? WHERE rowid = ?"));
  up->BindInt64(1, num_turns).BindInt64(2, exp);
  PTXB_RETURN_IF_ERROR(up->Run());
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * trajs,
      db_->Cached("UPDATE trajectories SET num_turns = ? WHERE experiment = ? AND num_turns < ?"));
  trajs->BindInt64(1, num_turns).BindInt64(2, exp).BindInt64(3, num_turns);
  PTXB_RETURN_IF_ERROR(trajs->Run());
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT rowid FROM trajectories WHERE experiment = ? AND state = ?"));
  s->BindInt64(1, exp).BindInt64(2, v1::LIMITS_EXCEEDED);
  std::vector<int64_t> resumable;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    resumable.push_back(s->ColumnInt64(0));
  }
  s->Reset();
  for (int64_t rowid : resumable) {
    PTXB_ASSIGN_OR_RETURN(TrajectoryRow t, ReadTrajectory(*db_, rowid));
    t.state = v1::AWAITING_MODEL;
    t.reason.clear();
    PTXB_RETURN_IF_ERROR(WriteTrajectory(*db_, t, absl::ToUnixMillis(clock_->Now())));
    PTXB_RETURN_IF_ERROR(EnqueueStep(t, t.turns_completed, StepKind::kLlm));
    PTXB_RETURN_IF_ERROR(AddEvent(t.experiment_id, t.id, t.turns_completed,
                                  "trajectory.extended", absl::StrCat("num_turns=", num_turns)));
  }
  return static_cast<int64_t>(resumable.size());
}

absl::StatusOr<v1::RegisterResponse> Core::Register(const v1::RegisterRequest& request) {
  if (request.kind() != v1::WORKER && request.kind() != v1::GATEWAY) {
    return absl::InvalidArgumentError("register: kind must be WORKER or GATEWAY");
  }
  std::string id = request.executor_id();
  if (id.empty()) {
    absl::BitGen gen;
    id = absl::StrFormat("%s_%012x", request.kind() == v1::WORKER ? "wk" : "gw",
                         absl::Uniform<uint64_t>(gen) & 0xffffffffffffULL);
  }
  const absl::Time now = clock_->Now();
  Executor& e = executors_[id];
  const bool draining = e.info.draining();
  e.info.set_executor_id(id);
  e.info.set_kind(request.kind());
  e.info.set_name(request.name());
  *e.info.mutable_capabilities() = request.capabilities();
  if (e.info.registered_unix_ms() == 0) e.info.set_registered_unix_ms(absl::ToUnixMillis(now));
  e.info.set_last_seen_unix_ms(absl::ToUnixMillis(now));
  e.info.set_draining(draining);
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("INSERT INTO executors(id, kind, name, capabilities, registered_ms, draining) "
                  "VALUES(?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, "
                  "name = excluded.name, capabilities = excluded.capabilities"));
  s->BindText(1, id)
      .BindInt64(2, request.kind())
      .BindText(3, request.name())
      .BindBlob(4, request.capabilities().SerializeAsString())
      .BindInt64(5, e.info.registered_unix_ms())
      .BindBool(6, draining);
  PTXB_RETURN_IF_ERROR(s->Run());
  v1::RegisterResponse response;
  response.set_executor_id(id);
  response.set_lease_ttl_ms(absl::ToInt64Milliseconds(options_.lease_ttl));
  response.set_heartbeat_interval_ms(absl::ToInt64Milliseconds(options_.heartbeat_interval));
  return response;
}

absl::Status Core::Drain(const std::string& executor_id) {
  auto it = executors_.find(executor_id);
  if (it == executors_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown executor '", executor_id, "'"));
  }
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("UPDATE executors SET draining = 1 WHERE id = ?"));
  s->BindText(1, executor_id);
  PTXB_RETURN_IF_ERROR(s->Run());
  it->second.info.set_draining(true);
  return absl::OkStatus();
}

bool Core::IsDraining(const std::string& executor_id) const {
  auto it = executors_.find(executor_id);
  return it != executors_.end() && it->second.info.draining();
}

bool Core::IsKnownExecutor(const std::string& executor_id) const {
  return executors_.count(executor_id) > 0;
}

std::vector<v1::ExecutorInfo> Core::ListExecutors() const {
  std::vector<v1::ExecutorInfo> out;
  for (const auto& [id, e] : executors_) {
    v1::ExecutorInfo info = e.info;
    info.set_leases(static_cast<int32_t>(e.tasks.size()));
    info.set_status(ExecutorStatus(e));
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace ptxbench::scheduler
