// Core: completions and the trajectory transitions they cause (DESIGN §2).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "scheduler/core.h"
#include "scheduler/core_rows.h"
#include "scheduler/extract.h"
#include "scheduler/feedback.h"
#include "storage/blob_store.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {

const char* StateEventName(v1::TrajectoryState state) {
  switch (state) {
    case v1::SUBMITTED: return "trajectory.submitted";
    case v1::LIMITS_EXCEEDED: return "trajectory.limits_exceeded";
    case v1::FAILED: return "trajectory.failed";
    case v1::CANCELLED: return "trajectory.cancelled";
    default: return "trajectory.state";
  }
}

}  // namespace

absl::Status Core::Complete(const v1::CompleteRequest& request) {
  PTXB_ASSIGN_OR_RETURN(int64_t rowid, ParseTaskId(request.lease().task_id()));
  auto lease = leases_.find(rowid);
  if (lease == leases_.end() || lease->second.lease_id != request.lease().lease_id()) {
    absl::StatusOr<TaskRow> row = ReadTask(*db_, rowid);
    if (row.ok() && row->state == TaskState::kDone &&
        row->lease_id == request.lease().lease_id()) {
      return absl::OkStatus();  // a retried report that was already accepted
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "stale lease: ", request.lease().lease_id(), " of task ", request.lease().task_id(),
        " is not current (expired, reassigned or cancelled); the report was dropped"));
  }
  PTXB_ASSIGN_OR_RETURN(TaskRow task, ReadTask(*db_, rowid));
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, ReadTrajectory(*db_, task.trajectory));
  switch (request.outcome_case()) {
    case v1::CompleteRequest::kFailure:
      if (request.failure().failure_class() == v1::FAILURE_CLASS_UNSPECIFIED) {
        return absl::InvalidArgumentError("a failure report needs a failure_class");
      }
      return HandleFailure(task, trajectory, request.failure());
    case v1::CompleteRequest::kLlm:
      if (task.kind != StepKind::kLlm) {
        return absl::InvalidArgumentError("an LLM response reported for an eval task");
      }
      return CompleteLlm(task, trajectory, request.llm());
    case v1::CompleteRequest::kEval:
      if (task.kind != StepKind::kEval) {
        return absl::InvalidArgumentError("an eval result reported for an LLM task");
      }
      if (request.eval().status() == v1::INFRA_ERROR ||
          request.eval().status() == v1::EVAL_STATUS_UNSPECIFIED) {
        v1::TaskFailure failure;
        failure.set_failure_class(v1::INFRA);
        failure.set_message(request.eval().error().empty()
                                ? std::string("eval result without a status")
                                : request.eval().error());
        return HandleFailure(task, trajectory, failure);
      }
      return CompleteEval(task, trajectory, request.eval());
    default:
      return absl::InvalidArgumentError("a completion needs an llm, eval or failure outcome");
  }
}

absl::Status Core::CompleteLlm(const TaskRow& task, TrajectoryRow& trajectory,
                               const v1::LlmResponse& response) {
  const ExperimentInfo& exp = experiments_.at(task.experiment);
  const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
  PTXB_ASSIGN_OR_RETURN(std::string answer_blob, storage::PutBlob(*db_, response.text()));
  std::string reasoning_blob;
  if (!response.reasoning().empty()) {
    PTXB_ASSIGN_OR_RETURN(reasoning_blob, storage::PutBlob(*db_, response.reasoning()));
  }
  v1::LlmResponse meta = response;  // texts live in blobs
  meta.clear_text();
  meta.clear_reasoning();
  std::optional<std::string> kernel = ExtractKernel(response.text(), exp.language);
  std::string kernel_blob, kernel_sha, feedback_blob;
  if (kernel) {
    PTXB_ASSIGN_OR_RETURN(kernel_blob, storage::PutBlob(*db_, *kernel));
    kernel_sha = Sha256Hex(*kernel);
  } else {
    PTXB_ASSIGN_OR_RETURN(feedback_blob,
                          storage::PutBlob(*db_, RenderNoCodeFeedback(exp.language)));
  }
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("INSERT INTO turns(trajectory, turn, state, answer_blob, reasoning_blob, "
                  "llm_meta, kernel_blob, kernel_sha256, feedback_blob, started_ms, "
                  "finished_ms) VALUES(?,?,?,?,?,?,?,?,?,?,?)"));
  s->BindInt64(1, trajectory.rowid).BindInt64(2, task.turn).BindText(3, kernel ? "eval" : "done");
  s->BindText(4, answer_blob);
  if (reasoning_blob.empty()) s->BindNull(5); else s->BindText(5, reasoning_blob);
  s->BindBlob(6, meta.SerializeAsString());
  if (kernel) {
    s->BindText(7, kernel_blob).BindText(8, kernel_sha).BindNull(9).BindInt64(10, task.created_ms).BindNull(11);
  } else {
    s->BindNull(7).BindNull(8).BindText(9, feedback_blob).BindInt64(10, task.created_ms).BindInt64(11, now_ms);
  }
  PTXB_RETURN_IF_ERROR(s->Run());

  TaskRow done = task;
  done.state = TaskState::kDone;
  PTXB_RETURN_IF_ERROR(WriteTaskState(*db_, done, 0));
  ReleaseLease(task.rowid);
  if (response.cost_usd() > 0) {
    trajectory.cost_usd += response.cost_usd();
    PTXB_ASSIGN_OR_RETURN(
        storage::Statement * cost,
        db_->Cached("UPDATE experiments SET cost_usd = cost_usd + ? WHERE rowid = ?"));
    cost->BindDouble(1, response.cost_usd()).BindInt64(2, task.experiment);
    PTXB_RETURN_IF_ERROR(cost->Run());
    experiments_.at(task.experiment).cost_usd += response.cost_usd();
  }
  if (response.simulated()) trajectory.simulated = true;
  PTXB_RETURN_IF_ERROR(AddEvent(
      trajectory.experiment_id, trajectory.id, task.turn, "turn.answered",
      absl::StrCat(response.provider(), " finish=", response.finish_reason(), " tokens=",
                   response.usage().input_tokens(), "/", response.usage().output_tokens(),
                   kernel ? "" : " no code block")));
  if (!kernel) return AdvanceOrEnd(trajectory, task.turn, /*target_met=*/false);
  trajectory.state = v1::AWAITING_EVAL;
  PTXB_RETURN_IF_ERROR(WriteTrajectory(*db_, trajectory, now_ms));
  return EnqueueStep(trajectory, task.turn, StepKind::kEval);
}

absl::Status Core::CompleteEval(const TaskRow& task, TrajectoryRow& trajectory,
                                const v1::EvalResult& result) {
  const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
  PTXB_ASSIGN_OR_RETURN(std::string eval_blob,
                        storage::PutBlob(*db_, result.SerializeAsString()));
  PTXB_ASSIGN_OR_RETURN(
      std::string feedback_blob,
      storage::PutBlob(*db_, RenderEvalFeedback(result, trajectory.target_speedup)));
  const bool correct = result.status() == v1::PASSED && result.all_passed();
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("UPDATE turns SET state = 'done', eval_blob = ?, eval_status = ?, "
                  "speedup = ?, feedback_blob = ?, finished_ms = ? "
                  "WHERE trajectory = ? AND turn = ?"));
  s->BindText(1, eval_blob)
      .BindInt64(2, result.status())
      .BindDouble(3, correct ? result.min_speedup() : 0)
      .BindText(4, feedback_blob)
      .BindInt64(5, now_ms)
      .BindInt64(6, trajectory.rowid)
      .BindInt64(7, task.turn);
  PTXB_RETURN_IF_ERROR(s->Run());
  TaskRow done = task;
  done.state = TaskState::kDone;
  PTXB_RETURN_IF_ERROR(WriteTaskState(*db_, done, 0));
  ReleaseLease(task.rowid);
  if (correct) {
    trajectory.correct = true;
    trajectory.best_speedup = std::max(trajectory.best_speedup, result.min_speedup());
  }
  if (result.simulated()) trajectory.simulated = true;
  PTXB_RETURN_IF_ERROR(AddEvent(
      trajectory.experiment_id, trajectory.id, task.turn, "turn.evaluated",
      absl::StrFormat("%s min_speedup=%.3f%s", v1::EvalStatus_Name(result.status()),
                      result.min_speedup(), result.simulated() ? " (simulated)" : "")));
  return AdvanceOrEnd(trajectory, task.turn, TargetMet(result, trajectory.target_speedup));
}

absl::Status Core::HandleFailure(const TaskRow& task, TrajectoryRow& trajectory,
                                 const v1::TaskFailure& failure) {
  TaskRow next = task;
  next.last_error = failure.message();
  int failures = 0, limit = 0;
  switch (failure.failure_class()) {
    case v1::INFRA:
      failures = ++next.infra_failures;
      limit = options_.max_infra_failures;
      break;
    case v1::MODEL_API:
      failures = ++next.api_failures;
      limit = options_.max_api_failures;
      break;
    default:  // TERMINAL
      break;
  }
  ReleaseLease(task.rowid);
  const char* kind = task.kind == StepKind::kLlm ? "LLM" : "eval";
  if (failure.failure_class() == v1::TERMINAL || failures >= limit) {
    next.state = TaskState::kFailed;
    PTXB_RETURN_IF_ERROR(WriteTaskState(*db_, next, 0));
    std::string reason =
        failure.failure_class() == v1::TERMINAL
            ? failure.message()
            : absl::StrCat(kind, " step failed ", failures, " times; last: ", failure.message());
    return EndTrajectory(trajectory, v1::FAILED, failure.failure_class(), reason);
  }
  absl::Duration wait = Backoff(failures);
  wait = std::max(wait, absl::Milliseconds(failure.retry_after_ms()));
  const absl::Time not_before = clock_->Now() + wait;
  next.state = TaskState::kQueued;
  PTXB_RETURN_IF_ERROR(WriteTaskState(*db_, next, absl::ToUnixMillis(not_before)));
  PTXB_RETURN_IF_ERROR(AddEvent(
      trajectory.experiment_id, trajectory.id, task.turn, "task.retry",
      absl::StrCat(v1::FailureClass_Name(failure.failure_class()), " failure ", failures, "/",
                   limit, ", retry in ", absl::FormatDuration(wait), ": ", failure.message())));
  PushDelayed(task.rowid,
              ReadyRef{task.experiment, task.kind,
                       RouteKey(task.experiment, task.kind, trajectory.model)},
              not_before);
  return absl::OkStatus();
}

absl::Status Core::EnqueueStep(const TrajectoryRow& trajectory, int turn, StepKind kind) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("INSERT INTO tasks(experiment, trajectory, turn, kind, state, created_ms) "
                  "VALUES(?,?,?,?,0,?)"));
  s->BindInt64(1, trajectory.experiment)
      .BindInt64(2, trajectory.rowid)
      .BindInt64(3, turn)
      .BindInt64(4, static_cast<int>(kind))
      .BindInt64(5, absl::ToUnixMillis(clock_->Now()));
  PTXB_RETURN_IF_ERROR(s->Run());
  PushReady(db_->LastInsertRowId(),
            ReadyRef{trajectory.experiment, kind,
                     RouteKey(trajectory.experiment, kind, trajectory.model)});
  return absl::OkStatus();
}

absl::Status Core::AdvanceOrEnd(TrajectoryRow& trajectory, int turn, bool target_met) {
  trajectory.turns_completed = turn + 1;
  if (target_met) {
    return EndTrajectory(trajectory, v1::SUBMITTED, v1::FAILURE_CLASS_UNSPECIFIED,
                         absl::StrFormat("target %.3fx met at turn %d",
                                         trajectory.target_speedup, turn));
  }
  if (trajectory.turns_completed >= trajectory.num_turns) {
    return EndTrajectory(trajectory, v1::LIMITS_EXCEEDED, v1::FAILURE_CLASS_UNSPECIFIED,
                         absl::StrCat("turn limit of ", trajectory.num_turns, " reached"));
  }
  if (experiments_.at(trajectory.experiment).OverBudget()) return EndForBudget(trajectory);
  trajectory.state = v1::AWAITING_MODEL;
  PTXB_RETURN_IF_ERROR(WriteTrajectory(*db_, trajectory, absl::ToUnixMillis(clock_->Now())));
  return EnqueueStep(trajectory, turn + 1, StepKind::kLlm);
}

absl::Status Core::EndForBudget(TrajectoryRow& trajectory) {
  const ExperimentInfo& exp = experiments_.at(trajectory.experiment);
  return EndTrajectory(trajectory, v1::LIMITS_EXCEEDED, v1::FAILURE_CLASS_UNSPECIFIED,
                       absl::StrFormat("experiment budget of $%.2f reached ($%.4f spent)",
                                       exp.max_cost_usd, exp.cost_usd));
}

absl::Status Core::EndTrajectory(TrajectoryRow& trajectory, v1::TrajectoryState state,
                                 v1::FailureClass failure_class, const std::string& reason) {
  trajectory.state = state;
  trajectory.failure_class = failure_class;
  trajectory.reason = reason;
  PTXB_RETURN_IF_ERROR(WriteTrajectory(*db_, trajectory, absl::ToUnixMillis(clock_->Now())));
  return AddEvent(trajectory.experiment_id, trajectory.id, trajectory.turns_completed - 1,
                  StateEventName(state), reason);
}

}  // namespace ptxbench::scheduler
