// Core: applying the transition tables of scheduler/store/transitions.h. These are
// the only callers of the row stores' Transit, so memory (queues, leases,
// timers) changes in step with every state the database records.
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "scheduler/state/core.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

absl::Status Core::TransitTask(TaskRow& task, const std::string& model, TaskEvent event,
                               absl::Time not_before) {
  const TaskState from = task.state;
  const int64_t not_before_ms =
      event == TaskEvent::kBackOff ? absl::ToUnixMillis(not_before) : 0;
  PTXB_RETURN_IF_ERROR(tasks_.Transit(task, event, not_before_ms));
  counters_.task_transitions[static_cast<int>(event)].fetch_add(1, std::memory_order_relaxed);
  if (from == TaskState::kLeased) ReleaseLease(task.rowid);
  // Its entry in a ready queue, if any, is skipped when popped.
  if (from == TaskState::kQueued) delayed_refs_.erase(task.rowid);
  if (task.state != TaskState::kQueued) return absl::OkStatus();
  const bool triton = task.kind == StepKind::kEval &&
                      EvalRunsAsTriton(task.experiment, task.trajectory, task.turn);
  ReadyRef ref{task.experiment, task.kind, RouteKey(task.experiment, task.kind, model, triton)};
  if (event == TaskEvent::kBackOff) {
    PushDelayed(task.rowid, ref, not_before);
  } else {
    PushReady(task.rowid, ref);
  }
  return absl::OkStatus();
}

absl::Status Core::Transit(TrajectoryRow& t, TrajectoryEvent event, const std::string& why,
                           v1::FailureClass failure_class) {
  PTXB_ASSIGN_OR_RETURN(const TrajectoryTransition* row,
                        FindTrajectoryTransition(t.state, event));
  if (IsTerminal(row->to)) {
    t.reason = why;
    t.failure_class = failure_class;
  } else if (IsTerminal(t.state)) {  // retry, extend: the old ending no longer holds
    t.reason.clear();
    t.failure_class = v1::FAILURE_CLASS_UNSPECIFIED;
  }
  PTXB_RETURN_IF_ERROR(
      trajectories_.Transit(t, event, absl::ToUnixMillis(clock_->Now())).status());
  counters_.trajectory_transitions[static_cast<int>(event)].fetch_add(1,
                                                                      std::memory_order_relaxed);
  PTXB_RETURN_IF_ERROR(ApplyEffect(t, row->effect));
  if (*row->log_kind == '\0') return absl::OkStatus();
  // An ending is logged at the last turn done; a resumption at the turn it
  // runs next.
  const int turn = IsTerminal(t.state) ? t.turns_completed - 1 : t.turns_completed;
  return AddEvent(t.experiment_id, t.id, turn, row->log_kind, why);
}

absl::Status Core::ApplyEffect(const TrajectoryRow& t, TrajectoryEffect effect) {
  switch (effect) {
    case TrajectoryEffect::kNone:
      return absl::OkStatus();
    case TrajectoryEffect::kQueueLlm:
      return EnqueueStep(t, t.turns_completed, StepKind::kLlm);
    case TrajectoryEffect::kQueueEval:
      return EnqueueStep(t, t.turns_completed, StepKind::kEval);
    case TrajectoryEffect::kResumeTask: {
      PTXB_ASSIGN_OR_RETURN(std::optional<int64_t> last, tasks_.LastEndedOf(t.rowid));
      if (!last) return absl::InternalError(absl::StrCat("no failed task to resume in ", t.id));
      PTXB_ASSIGN_OR_RETURN(TaskRow task, tasks_.Read(*last));
      task.deaths = task.infra_failures = task.api_failures = 0;
      return TransitTask(task, t.model, TaskEvent::kResume);
    }
    case TrajectoryEffect::kCancelTasks: {
      PTXB_ASSIGN_OR_RETURN(std::vector<int64_t> live, tasks_.LiveOf(t.rowid));
      for (int64_t rowid : live) {
        PTXB_ASSIGN_OR_RETURN(TaskRow task, tasks_.Read(rowid));
        PTXB_RETURN_IF_ERROR(TransitTask(task, t.model, TaskEvent::kCancel));
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown trajectory effect");
}

absl::Status Core::EnqueueStep(const TrajectoryRow& trajectory, int turn, StepKind kind) {
  PTXB_ASSIGN_OR_RETURN(const int64_t task,
                        tasks_.Insert(trajectory.experiment, trajectory.rowid, turn, kind,
                                      absl::ToUnixMillis(clock_->Now())));
  const bool triton =
      kind == StepKind::kEval && EvalRunsAsTriton(trajectory.experiment, trajectory.rowid, turn);
  PushReady(task, ReadyRef{trajectory.experiment, kind,
                           RouteKey(trajectory.experiment, kind, trajectory.model, triton)});
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
