#include "scheduler/store/transitions.h"

#include "absl/strings/str_cat.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {

using E = TaskEvent;
using S = TaskState;
constexpr TaskTransition kTaskTable[] = {
    {S::kQueued, E::kLease, S::kLeased},
    {S::kQueued, E::kAnswerByFile, S::kDone},
    {S::kQueued, E::kCancel, S::kCancelled},
    {S::kLeased, E::kComplete, S::kDone},
    {S::kLeased, E::kBackOff, S::kQueued},
    {S::kLeased, E::kFail, S::kFailed},
    {S::kLeased, E::kPoison, S::kPoisoned},
    {S::kLeased, E::kCancel, S::kCancelled},
    {S::kFailed, E::kResume, S::kQueued},
    {S::kPoisoned, E::kResume, S::kQueued},
};

using J = TrajectoryEvent;
using F = TrajectoryEffect;
constexpr TrajectoryTransition kTrajectoryTable[] = {
    // from               event           to                  effect           event log
    {v1::AWAITING_MODEL, J::kAnswered, v1::AWAITING_EVAL, F::kQueueEval, ""},
    {v1::AWAITING_MODEL, J::kNextTurn, v1::AWAITING_MODEL, F::kQueueLlm, ""},
    {v1::AWAITING_EVAL, J::kNextTurn, v1::AWAITING_MODEL, F::kQueueLlm, ""},
    {v1::AWAITING_EVAL, J::kTargetMet, v1::SUBMITTED, F::kNone, "trajectory.submitted"},
    // A synthesis answer within its bounds: nothing to evaluate.
    {v1::AWAITING_MODEL, J::kTargetMet, v1::SUBMITTED, F::kNone, "trajectory.submitted"},
    {v1::AWAITING_MODEL, J::kTurnLimit, v1::LIMITS_EXCEEDED, F::kNone, "trajectory.limits_exceeded"},
    {v1::AWAITING_EVAL, J::kTurnLimit, v1::LIMITS_EXCEEDED, F::kNone, "trajectory.limits_exceeded"},
    {v1::AWAITING_MODEL, J::kOverBudget, v1::LIMITS_EXCEEDED, F::kCancelTasks, "trajectory.limits_exceeded"},
    {v1::AWAITING_EVAL, J::kOverBudget, v1::LIMITS_EXCEEDED, F::kCancelTasks, "trajectory.limits_exceeded"},
    {v1::AWAITING_MODEL, J::kFail, v1::FAILED, F::kNone, "trajectory.failed"},
    {v1::AWAITING_EVAL, J::kFail, v1::FAILED, F::kNone, "trajectory.failed"},
    {v1::AWAITING_MODEL, J::kCancel, v1::CANCELLED, F::kCancelTasks, "trajectory.cancelled"},
    {v1::AWAITING_EVAL, J::kCancel, v1::CANCELLED, F::kCancelTasks, "trajectory.cancelled"},
    {v1::FAILED, J::kRetryLlm, v1::AWAITING_MODEL, F::kResumeTask, "trajectory.retried"},
    {v1::FAILED, J::kRetryEval, v1::AWAITING_EVAL, F::kResumeTask, "trajectory.retried"},
    {v1::LIMITS_EXCEEDED, J::kExtend, v1::AWAITING_MODEL, F::kQueueLlm, "trajectory.extended"},
    // Agent mode. Its evaluations may be live when the session ends: they
    // are cancelled with it.
    {v1::AWAITING_AGENT, J::kAgentEval, v1::AWAITING_AGENT, F::kQueueEval, ""},
    {v1::AWAITING_AGENT, J::kAgentEvaluated, v1::AWAITING_AGENT, F::kNone, ""},
    {v1::AWAITING_AGENT, J::kTargetMet, v1::SUBMITTED, F::kCancelTasks, "trajectory.submitted"},
    {v1::AWAITING_AGENT, J::kAgentEnded, v1::LIMITS_EXCEEDED, F::kCancelTasks, "trajectory.limits_exceeded"},
    {v1::AWAITING_AGENT, J::kOverBudget, v1::LIMITS_EXCEEDED, F::kCancelTasks, "trajectory.limits_exceeded"},
    {v1::AWAITING_AGENT, J::kFail, v1::FAILED, F::kCancelTasks, "trajectory.failed"},
    {v1::AWAITING_AGENT, J::kCancel, v1::CANCELLED, F::kCancelTasks, "trajectory.cancelled"},
    {v1::FAILED, J::kRetryAgent, v1::AWAITING_AGENT, F::kResumeTask, "trajectory.retried"},
};

}  // namespace

absl::Span<const TaskTransition> TaskTable() { return kTaskTable; }
absl::Span<const TrajectoryTransition> TrajectoryTable() { return kTrajectoryTable; }

absl::StatusOr<TaskState> NextTaskState(TaskState from, TaskEvent event) {
  for (const TaskTransition& t : kTaskTable) {
    if (t.from == from && t.event == event) return t.to;
  }
  return absl::InternalError(absl::StrCat("task state machine: no transition from ",
                                          TaskStateName(from), " on ", TaskEventName(event)));
}

absl::StatusOr<const TrajectoryTransition*> FindTrajectoryTransition(v1::TrajectoryState from,
                                                                     TrajectoryEvent event) {
  for (const TrajectoryTransition& t : kTrajectoryTable) {
    if (t.from == from && t.event == event) return &t;
  }
  return absl::InternalError(absl::StrCat("trajectory state machine: no transition from ",
                                          v1::TrajectoryState_Name(from), " on ",
                                          TrajectoryEventName(event)));
}

bool IsTerminal(v1::TrajectoryState state) {
  return state != v1::AWAITING_MODEL && state != v1::AWAITING_EVAL &&
         state != v1::AWAITING_AGENT;
}

const char* TaskStateName(TaskState state) {
  switch (state) {
    case S::kQueued: return "QUEUED";
    case S::kLeased: return "LEASED";
    case S::kDone: return "DONE";
    case S::kFailed: return "FAILED";
    case S::kPoisoned: return "POISONED";
    case S::kCancelled: return "CANCELLED";
  }
  return "?";
}

const char* TaskEventName(TaskEvent event) {
  switch (event) {
    case E::kLease: return "lease";
    case E::kAnswerByFile: return "answer-by-file";
    case E::kComplete: return "complete";
    case E::kBackOff: return "back-off";
    case E::kFail: return "fail";
    case E::kPoison: return "poison";
    case E::kCancel: return "cancel";
    case E::kResume: return "resume";
  }
  return "?";
}

const char* TrajectoryEventName(TrajectoryEvent event) {
  switch (event) {
    case J::kAnswered: return "answered";
    case J::kNextTurn: return "next-turn";
    case J::kTargetMet: return "target-met";
    case J::kTurnLimit: return "turn-limit";
    case J::kOverBudget: return "over-budget";
    case J::kFail: return "fail";
    case J::kCancel: return "cancel";
    case J::kRetryLlm: return "retry-llm";
    case J::kRetryEval: return "retry-eval";
    case J::kExtend: return "extend";
    case J::kAgentEval: return "agent-eval";
    case J::kAgentEvaluated: return "agent-evaluated";
    case J::kAgentEnded: return "agent-ended";
    case J::kRetryAgent: return "retry-agent";
  }
  return "?";
}

}  // namespace ptxbench::scheduler
