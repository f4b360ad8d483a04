// Core: leasing, heartbeats, expiry, backoff and recovery (DESIGN §3).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "scheduler/core.h"
#include "scheduler/core_rows.h"
#include "storage/blob_store.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {
constexpr char kEvalFull[] = "full";
constexpr char kEvalCompileOnly[] = "compile-only";
constexpr size_t kPromptCacheEntries = 256;
}  // namespace

bool Core::HasHealthyGpu(const v1::Capabilities& caps) {
  return std::any_of(caps.gpus().begin(), caps.gpus().end(),
                     [](const v1::Gpu& g) { return g.healthy(); });
}

std::string Core::RouteKey(int64_t experiment, StepKind kind, const std::string& model) const {
  if (kind == StepKind::kLlm) return model;
  auto it = experiments_.find(experiment);
  bool compile_only = it != experiments_.end() && it->second.eval_mode == v1::COMPILE_ONLY;
  return compile_only ? kEvalCompileOnly : kEvalFull;
}

void Core::PushReady(int64_t task, const ReadyRef& ref) {
  ++ready_generation_;
  (ref.kind == StepKind::kLlm ? llm_ready_ : eval_ready_)
      .Push(ref.experiment, ref.route_key, task);
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
  auto it = leases_.find(task);
  if (it == leases_.end()) return;
  if (it->second.kind == StepKind::kLlm) {
    auto m = model_inflight_.find(it->second.route_key);
    if (m != model_inflight_.end() && --m->second <= 0) model_inflight_.erase(m);
  }
  auto e = executors_.find(it->second.executor);
  if (e != executors_.end()) e->second.tasks.erase(task);
  leases_.erase(it);
}

std::optional<FairQueue::Popped> Core::PopFor(const Executor& executor) {
  const v1::Capabilities& caps = executor.info.capabilities();
  if (executor.info.kind() == v1::GATEWAY) {
    return llm_ready_.Pop([&](const std::string& model) {
      if (!caps.serves_any_model() &&
          std::find(caps.models().begin(), caps.models().end(), model) == caps.models().end()) {
        return false;
      }
      auto cap = options_.model_inflight_caps.find(model);
      int limit = cap != options_.model_inflight_caps.end() ? cap->second
                                                            : options_.default_model_inflight_cap;
      auto inflight = model_inflight_.find(model);
      return inflight == model_inflight_.end() || inflight->second < limit;
    });
  }
  const bool has_gpu = HasHealthyGpu(caps);
  return eval_ready_.Pop([&](const std::string& key) {
    return key == kEvalCompileOnly || (key == kEvalFull && has_gpu);
  });
}

absl::StatusOr<std::optional<v1::Task>> Core::TryLease(const std::string& executor_id) {
  auto it = executors_.find(executor_id);
  if (it == executors_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown executor '", executor_id, "'"));
  }
  Executor& executor = it->second;
  executor.info.set_last_seen_unix_ms(absl::ToUnixMillis(clock_->Now()));
  if (executor.info.draining()) return std::nullopt;
  while (true) {
    std::optional<FairQueue::Popped> popped = PopFor(executor);
    if (!popped) return std::nullopt;
    // Entries of cancelled tasks are left in the queues and skipped here.
    PTXB_ASSIGN_OR_RETURN(TaskRow task, ReadTask(*db_, popped->task));
    if (task.state != TaskState::kQueued || leases_.count(task.rowid)) continue;
    if (task.kind == StepKind::kLlm && experiments_.at(task.experiment).OverBudget()) {
      // Queued before the budget ran out: it never starts.
      TaskRow cancelled = task;
      cancelled.state = TaskState::kCancelled;
      PTXB_RETURN_IF_ERROR(WriteTaskState(*db_, cancelled, 0));
      PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, ReadTrajectory(*db_, task.trajectory));
      PTXB_RETURN_IF_ERROR(EndForBudget(trajectory));
      continue;
    }
    PTXB_ASSIGN_OR_RETURN(v1::Task granted, GrantLease(task, executor));
    return granted;
  }
}

absl::StatusOr<v1::Task> Core::GrantLease(const TaskRow& task, Executor& executor) {
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, ReadTrajectory(*db_, task.trajectory));
  const absl::Time now = clock_->Now();
  Lease lease;
  lease.lease_id = absl::StrFormat("ls_%016x", lease_salt_ ^ (++lease_counter_ * 0x9e3779b97f4a7c15ULL));
  lease.executor = executor.info.executor_id();
  lease.experiment = task.experiment;
  lease.kind = task.kind;
  lease.route_key = RouteKey(task.experiment, task.kind, trajectory.model);
  lease.attempt_limit = now + (task.kind == StepKind::kLlm ? options_.max_llm_attempt
                                                           : options_.max_eval_attempt);
  lease.deadline = std::min(now + options_.lease_ttl, lease.attempt_limit);

  v1::Task out;
  out.mutable_lease()->set_task_id(FormatTaskId(task.rowid));
  out.mutable_lease()->set_lease_id(lease.lease_id);
  out.set_kind(task.kind == StepKind::kLlm ? v1::LLM : v1::EVAL);
  out.set_trajectory_id(trajectory.id);
  out.set_experiment_id(trajectory.experiment_id);
  out.set_turn(task.turn);
  out.set_attempt(task.attempt + 1);
  out.set_lease_deadline_unix_ms(absl::ToUnixMillis(lease.deadline));
  PTXB_RETURN_IF_ERROR(BuildPayload(task, trajectory, &out));

  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("UPDATE tasks SET state = 1, attempt = attempt + 1, lease_id = ?, "
                  "lease_deadline_ms = ?, executor = ? WHERE rowid = ?"));
  s->BindText(1, lease.lease_id)
      .BindInt64(2, absl::ToUnixMillis(lease.deadline))
      .BindText(3, lease.executor)
      .BindInt64(4, task.rowid);
  PTXB_RETURN_IF_ERROR(s->Run());
  PTXB_RETURN_IF_ERROR(AddEvent(trajectory.experiment_id, trajectory.id, task.turn,
                                "task.leased",
                                absl::StrCat(task.kind == StepKind::kLlm ? "llm" : "eval",
                                             " attempt ", task.attempt + 1, " to ",
                                             lease.executor)));
  if (task.kind == StepKind::kLlm) ++model_inflight_[lease.route_key];
  executor.tasks.insert(task.rowid);
  lease_deadlines_.push(Timer{lease.deadline, task.rowid});
  leases_[task.rowid] = std::move(lease);
  return out;
}

absl::StatusOr<std::string> Core::CachedBlob(const std::string& hash) {
  auto it = prompt_cache_.find(hash);
  if (it != prompt_cache_.end()) return it->second;
  PTXB_ASSIGN_OR_RETURN(std::string text, storage::GetBlob(*db_, hash));
  if (prompt_cache_.size() >= kPromptCacheEntries) prompt_cache_.clear();
  prompt_cache_.emplace(hash, text);
  return text;
}

absl::Status Core::BuildPayload(const TaskRow& task, const TrajectoryRow& trajectory,
                                v1::Task* out) {
  const ExperimentInfo& exp = experiments_.at(task.experiment);
  if (task.kind == StepKind::kEval) {
    PTXB_ASSIGN_OR_RETURN(
        storage::Statement * s,
        db_->Cached("SELECT kernel_blob, kernel_sha256 FROM turns WHERE trajectory = ? AND turn = ?"));
    s->BindInt64(1, trajectory.rowid).BindInt64(2, task.turn);
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) return absl::InternalError(absl::StrCat("eval task without a turn: ", trajectory.id));
    std::string blob = s->ColumnText(0), sha = s->ColumnText(1);
    s->Reset();
    v1::EvalRequest* eval = out->mutable_eval();
    PTXB_ASSIGN_OR_RETURN(*eval->mutable_kernel_source(), storage::GetBlob(*db_, blob));
    eval->set_kernel_sha256(sha);
    eval->set_definition(trajectory.definition);
    eval->set_language(exp.language);
    eval->set_mode(exp.eval_mode);
    eval->set_target_speedup(trajectory.target_speedup);
    for (const std::string& w : trajectory.workloads) eval->add_workload_uuids(w);
    return absl::OkStatus();
  }
  v1::LlmRequest* llm = out->mutable_llm();
  llm->set_model(trajectory.model);
  PTXB_ASSIGN_OR_RETURN(std::string system, CachedBlob(trajectory.system_blob));
  PTXB_ASSIGN_OR_RETURN(std::string task_prompt, CachedBlob(trajectory.task_blob));
  // Context policies (DESIGN §2, issue text): "full" sends every earlier
  // answer and feedback; "latest-pair" only the last ones; "single-user"
  // merges the system prompt into the first user message for models without
  // a system role, then sends the full history.
  std::vector<std::pair<std::string, std::string>> history;  // answer, feedback
  if (task.turn > 0) {
    PTXB_ASSIGN_OR_RETURN(
        storage::Statement * s,
        db_->Cached("SELECT answer_blob, feedback_blob FROM turns WHERE trajectory = ? "
                    "AND turn >= ? AND turn < ? ORDER BY turn"));
    int first = exp.context_policy == "latest-pair" ? task.turn - 1 : 0;
    s->BindInt64(1, trajectory.rowid).BindInt64(2, first).BindInt64(3, task.turn);
    std::vector<std::pair<std::string, std::string>> hashes;
    while (true) {
      PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      hashes.emplace_back(s->ColumnText(0), s->ColumnText(1));
    }
    s->Reset();
    for (const auto& [a, f] : hashes) {
      PTXB_ASSIGN_OR_RETURN(std::string answer, storage::GetBlob(*db_, a));
      PTXB_ASSIGN_OR_RETURN(std::string feedback, storage::GetBlob(*db_, f));
      history.emplace_back(std::move(answer), std::move(feedback));
    }
  }
  auto add = [&](const char* role, std::string content) {
    v1::ChatMessage* m = llm->add_messages();
    m->set_role(role);
    m->set_content(std::move(content));
  };
  if (exp.context_policy == "single-user") {
    add("user", absl::StrCat(system, "\n\n", task_prompt));
  } else {
    add("system", system);
    add("user", task_prompt);
  }
  for (auto& [answer, feedback] : history) {
    add("assistant", std::move(answer));
    add("user", std::move(feedback));
  }
  int64_t chars = 0;
  for (const v1::ChatMessage& m : llm->messages()) chars += m.content().size();
  llm->set_estimated_input_tokens(chars / 4);  // ~4 characters per token
  return absl::OkStatus();
}

v1::HeartbeatResponse Core::Heartbeat(const v1::HeartbeatRequest& request) {
  v1::HeartbeatResponse response;
  auto e = executors_.find(request.executor_id());
  if (e == executors_.end()) {
    response.set_reregister(true);
    *response.mutable_revoked() = request.leases();
    return response;
  }
  const absl::Time now = clock_->Now();
  e->second.info.set_last_seen_unix_ms(absl::ToUnixMillis(now));
  response.set_drain(e->second.info.draining());
  absl::Time deadline = now + options_.lease_ttl;
  for (const v1::LeaseRef& ref : request.leases()) {
    absl::StatusOr<int64_t> task = ParseTaskId(ref.task_id());
    auto it = task.ok() ? leases_.find(*task) : leases_.end();
    if (it == leases_.end() || it->second.lease_id != ref.lease_id()) {
      *response.add_revoked() = ref;
      continue;
    }
    it->second.deadline = std::min(deadline, it->second.attempt_limit);
    lease_deadlines_.push(Timer{it->second.deadline, *task});
  }
  response.set_lease_deadline_unix_ms(absl::ToUnixMillis(deadline));
  return response;
}

absl::Status Core::ExpireLease(int64_t task_rowid, const std::string& why) {
  PTXB_ASSIGN_OR_RETURN(TaskRow task, ReadTask(*db_, task_rowid));
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, ReadTrajectory(*db_, task.trajectory));
  const std::string executor = leases_.at(task_rowid).executor;
  ReleaseLease(task_rowid);
  ++task.deaths;
  task.last_error = absl::StrCat(why, " (executor ", executor, ")");
  if (task.deaths >= options_.max_executor_deaths) {
    task.state = TaskState::kPoisoned;
    PTXB_RETURN_IF_ERROR(WriteTaskState(*db_, task, 0));
    PTXB_RETURN_IF_ERROR(AddEvent(trajectory.experiment_id, trajectory.id, task.turn,
                                  "task.poisoned", task.last_error));
    return EndTrajectory(
        trajectory, v1::FAILED, v1::INFRA,
        absl::StrCat("poisoned: the executors holding this ",
                     task.kind == StepKind::kLlm ? "LLM" : "eval", " step died ", task.deaths,
                     " times; last: ", task.last_error));
  }
  const absl::Time not_before = clock_->Now() + Backoff(task.deaths);
  task.state = TaskState::kQueued;
  PTXB_RETURN_IF_ERROR(WriteTaskState(*db_, task, absl::ToUnixMillis(not_before)));
  PTXB_RETURN_IF_ERROR(AddEvent(trajectory.experiment_id, trajectory.id, task.turn,
                                "task.expired", task.last_error));
  PushDelayed(task_rowid,
              ReadyRef{task.experiment, task.kind,
                       RouteKey(task.experiment, task.kind, trajectory.model)},
              not_before);
  return absl::OkStatus();
}

absl::Status Core::Tick() {
  const absl::Time now = clock_->Now();
  while (!lease_deadlines_.empty() && lease_deadlines_.top().at <= now) {
    const int64_t task = lease_deadlines_.top().task;
    lease_deadlines_.pop();
    auto it = leases_.find(task);
    if (it == leases_.end() || it->second.deadline > now) continue;  // done or extended
    PTXB_RETURN_IF_ERROR(ExpireLease(
        task, it->second.deadline >= it->second.attempt_limit ? "attempt ran past its time limit"
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
  const absl::Time now = clock_->Now();
  {
    PTXB_ASSIGN_OR_RETURN(
        storage::Statement * s,
        db_->Cached("SELECT rowid, id, language, context_policy, eval_mode, priority, "
                    "max_cost_usd, cost_usd FROM experiments"));
    while (true) {
      PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      ExperimentInfo info;
      info.id = s->ColumnText(1);
      info.language = s->ColumnText(2);
      info.context_policy = s->ColumnText(3);
      info.eval_mode = static_cast<v1::EvalMode>(s->ColumnInt64(4));
      info.priority = static_cast<int>(s->ColumnInt64(5));
      info.max_cost_usd = s->ColumnDouble(6);
      info.cost_usd = s->ColumnDouble(7);
      experiments_[s->ColumnInt64(0)] = info;
      llm_ready_.SetWeight(s->ColumnInt64(0), info.priority);
      eval_ready_.SetWeight(s->ColumnInt64(0), info.priority);
    }
    s->Reset();
  }
  {
    PTXB_ASSIGN_OR_RETURN(
        storage::Statement * s,
        db_->Cached("SELECT id, kind, name, capabilities, registered_ms, draining FROM executors"));
    while (true) {
      PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      Executor& e = executors_[s->ColumnText(0)];
      e.info.set_executor_id(s->ColumnText(0));
      e.info.set_kind(static_cast<v1::ExecutorKind>(s->ColumnInt64(1)));
      e.info.set_name(s->ColumnText(2));
      e.info.mutable_capabilities()->ParseFromString(s->ColumnBlob(3));
      e.info.set_registered_unix_ms(s->ColumnInt64(4));
      e.info.set_draining(s->ColumnInt64(5) != 0);
      e.info.set_last_seen_unix_ms(absl::ToUnixMillis(now));  // grace after restart
    }
    s->Reset();
  }
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT t.rowid, t.experiment, t.kind, t.state, t.not_before_ms, "
                  "t.lease_id, t.executor, t.lease_deadline_ms, j.model FROM tasks t "
                  "JOIN trajectories j ON j.rowid = t.trajectory "
                  "WHERE t.state IN (0, 1) ORDER BY t.rowid"));
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    const int64_t task = s->ColumnInt64(0);
    ReadyRef ref{s->ColumnInt64(1), static_cast<StepKind>(s->ColumnInt64(2)), ""};
    ref.route_key = RouteKey(ref.experiment, ref.kind, s->ColumnText(8));
    if (static_cast<TaskState>(s->ColumnInt64(3)) == TaskState::kQueued) {
      absl::Time not_before = absl::FromUnixMillis(s->ColumnInt64(4));
      if (not_before > now) {
        PushDelayed(task, ref, not_before);
      } else {
        PushReady(task, ref);
      }
      continue;
    }
    Lease lease;
    lease.lease_id = s->ColumnText(5);
    lease.executor = s->ColumnText(6);
    lease.experiment = ref.experiment;
    lease.kind = ref.kind;
    lease.route_key = ref.route_key;
    lease.attempt_limit = now + (ref.kind == StepKind::kLlm ? options_.max_llm_attempt
                                                            : options_.max_eval_attempt);
    lease.deadline = std::max(absl::FromUnixMillis(s->ColumnInt64(7)), now + options_.lease_ttl);
    if (ref.kind == StepKind::kLlm) ++model_inflight_[ref.route_key];
    executors_[lease.executor].tasks.insert(task);
    lease_deadlines_.push(Timer{lease.deadline, task});
    leases_[task] = std::move(lease);
  }
  s->Reset();
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
