#ifndef PTXBENCH_SCHEDULER_STORE_TRANSITIONS_H_
#define PTXBENCH_SCHEDULER_STORE_TRANSITIONS_H_

// The trajectory and task state machine in one place (docs/ARCHITECTURE.md,
// "The state machine"): every state a row may take next is a row of one of
// the two tables below. The row stores (TaskStore, TrajectoryStore) write a
// state only through NextTaskState / NextTrajectoryState, so a state change
// that is not in a table cannot reach the database.
//
// A refused pair is a bug in the caller, never a user error: Core checks the
// state of a row before it decides on an event. It is reported as INTERNAL so
// the Dispatcher stops the process (memory may be ahead of disk) instead of
// taking it for a caller's mistake that changed nothing.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ptxbench/v1/common.pb.h"
#include "scheduler/store/schema.h"

namespace ptxbench::scheduler {

enum class TaskEvent {
  kLease,         // an executor takes the task
  kAnswerByFile,  // a one-off evaluation: the submitted file is the answer
  kComplete,      // its executor reported a result
  kBackOff,       // a failure or lost lease with retries left: wait, then queue
  kFail,          // a terminal failure, or out of retries
  kPoison,        // its executors kept dying with it
  kCancel,        // its trajectory ended (user cancel, budget reached)
  kResume,        // `ptxbench retry`: run the failed step again
};

enum class TrajectoryEvent {
  kAnswered,    // the model's answer holds a kernel: evaluate it
  kNextTurn,    // a turn ended without meeting the target: ask the model again
  kTargetMet,   // an evaluation met target_speedup
  kTurnLimit,   // num_turns turns are done
  kOverBudget,  // the experiment spent max_cost_usd
  kFail,        // a step failed for good (FailureClass says why)
  kCancel,      // a user cancelled it, or its experiment
  kRetryLlm,    // `ptxbench retry` of a failed model step
  kRetryEval,   // `ptxbench retry` of a failed evaluation step
  kExtend,      // `ptxbench extend` raised num_turns above turns_completed
  // Agent mode (docs/AGENTS.md): the session stays AWAITING_AGENT while it
  // evaluates; its end decides the final state.
  kAgentEval,       // the session asked for an evaluation: queue it
  kAgentEvaluated,  // an evaluation of the session ended (recorded, no move)
  kAgentEnded,      // the session ended without meeting the target
  kRetryAgent,      // `ptxbench retry` of a session lost before any evaluation
};

// What a trajectory transition does besides changing the state. Core applies
// these (Core::Transit); the table says which.
enum class TrajectoryEffect {
  kNone,
  kQueueLlm,     // insert the LLM task of turn turns_completed
  kQueueEval,    // insert the eval task of turn turns_completed
  kResumeTask,   // put its failed or poisoned last task back in the queue
  kCancelTasks,  // cancel its queued and leased tasks
};

struct TaskTransition {
  TaskState from;
  TaskEvent event;
  TaskState to;
};

struct TrajectoryTransition {
  ptxbench::v1::TrajectoryState from;
  TrajectoryEvent event;
  ptxbench::v1::TrajectoryState to;
  TrajectoryEffect effect;
  const char* log_kind;  // the event-log entry it writes; "" for none
};

absl::Span<const TaskTransition> TaskTable();
absl::Span<const TrajectoryTransition> TrajectoryTable();

// The state `event` leads to from `from`; INTERNAL when the table has no row.
absl::StatusOr<TaskState> NextTaskState(TaskState from, TaskEvent event);
absl::StatusOr<const TrajectoryTransition*> FindTrajectoryTransition(
    ptxbench::v1::TrajectoryState from, TrajectoryEvent event);

// Not AWAITING_*: no task of the trajectory is live. FAILED and
// LIMITS_EXCEEDED are terminal although retry and extend leave them.
bool IsTerminal(ptxbench::v1::TrajectoryState state);

const char* TaskStateName(TaskState state);
const char* TaskEventName(TaskEvent event);
const char* TrajectoryEventName(TrajectoryEvent event);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_TRANSITIONS_H_
