// Core: completions and the trajectory transitions they cause
// (docs/ARCHITECTURE.md, "The state machine").
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "scheduler/feedback/extract.h"
#include "scheduler/feedback/feedback.h"
#include "scheduler/state/core.h"
#include "storage/blob_store.h"
#include "verdict/scores.h"
#include "verdict/verdict.h"

namespace ptxbench::scheduler {

using experiment_spec::SynthesisSettings;

namespace v1 = ::ptxbench::v1;

absl::Status Core::Complete(const v1::CompleteRequest& request) {
  AssertOnWriterThread();
  PTXB_ASSIGN_OR_RETURN(int64_t rowid, ParseTaskId(request.lease().task_id()));
  const Lease* lease = leases_.Find(rowid);
  if (lease == nullptr || lease->lease_id != request.lease().lease_id()) {
    absl::StatusOr<TaskRow> row = tasks_.Read(rowid);
    if (row.ok() && row->state == TaskState::kDone &&
        row->lease_id == request.lease().lease_id() && row->executor == request.executor_id()) {
      return absl::OkStatus();  // a retried report that was already accepted
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "stale lease: ", request.lease().lease_id(), " of task ", request.lease().task_id(),
        " is not current (expired, reassigned or cancelled); the report was dropped"));
  }
  if (lease->executor != request.executor_id()) {
    return absl::PermissionDeniedError(
        absl::StrCat("lease ", request.lease().lease_id(), " of task ", request.lease().task_id(),
                     " is held by another executor; the report was dropped"));
  }
  PTXB_ASSIGN_OR_RETURN(TaskRow task, tasks_.Read(rowid));
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, trajectories_.Read(task.trajectory));
  switch (request.outcome_case()) {
    case v1::CompleteRequest::kFailure:
      if (request.failure().failure_class() == v1::FAILURE_CLASS_UNSPECIFIED) {
        return absl::InvalidArgumentError("a failure report needs a failure_class");
      }
      return HandleFailure(task, trajectory, request.failure());
    case v1::CompleteRequest::kLlm:
      if (task.kind != StepKind::kLlm) {
        return absl::InvalidArgumentError("an LLM response reported for another kind of task");
      }
      return CompleteLlm(task, TaskEvent::kComplete, trajectory, request.llm());
    case v1::CompleteRequest::kEval:
      if (task.kind != StepKind::kEval) {
        return absl::InvalidArgumentError("an eval result reported for another kind of task");
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
    case v1::CompleteRequest::kAgent:
      if (task.kind != StepKind::kAgent) {
        return absl::InvalidArgumentError("an agent outcome reported for another kind of task");
      }
      if (request.agent().end() == v1::AGENT_END_UNSPECIFIED) {
        return absl::InvalidArgumentError("an agent outcome needs an end");
      }
      return CompleteAgent(task, trajectory, request.agent());
    default:
      return absl::InvalidArgumentError(
          "a completion needs an llm, eval, agent or failure outcome");
  }
}

absl::Status Core::CompleteLlm(TaskRow& task, TaskEvent event, TrajectoryRow& trajectory,
                               const v1::LlmResponse& response) {
  const ExperimentRow& exp = experiments_.at(task.experiment);
  AnswerRow turn;
  PTXB_ASSIGN_OR_RETURN(turn.answer_blob, storage::PutBlob(*db_, response.text()));
  if (!response.reasoning().empty()) {
    PTXB_ASSIGN_OR_RETURN(turn.reasoning_blob, storage::PutBlob(*db_, response.reasoning()));
  }
  if (exp.synthesis) return CompleteSynthesis(task, trajectory, response, std::move(turn));
  std::optional<std::string> kernel = ExtractKernel(response.text(), exp.language);
  if (kernel) {
    PTXB_ASSIGN_OR_RETURN(turn.kernel_blob, storage::PutBlob(*db_, *kernel));
    turn.kernel_sha256 = Sha256Hex(*kernel);
  } else {
    PTXB_ASSIGN_OR_RETURN(turn.feedback_blob,
                          storage::PutBlob(*db_, RenderNoCodeFeedback(exp.language)));
  }
  PTXB_RETURN_IF_ERROR(RecordAnswer(task, event, trajectory, response, std::move(turn),
                                    kernel ? "" : " no code block"));
  if (!kernel) return AdvanceOrEnd(trajectory, task.turn, /*target_met=*/false);
  return Transit(trajectory, TrajectoryEvent::kAnswered, "");
}

absl::Status Core::RecordAnswer(TaskRow& task, TaskEvent event, TrajectoryRow& trajectory,
                                const v1::LlmResponse& response, AnswerRow turn,
                                absl::string_view note) {
  v1::LlmResponse meta = response;  // texts live in blobs
  meta.clear_text();
  meta.clear_reasoning();
  turn.trajectory = trajectory.rowid;
  turn.turn = task.turn;
  turn.llm_meta = meta.SerializeAsString();
  turn.started_ms = task.created_ms;
  turn.finished_ms = absl::ToUnixMillis(clock_->Now());
  PTXB_RETURN_IF_ERROR(turns_.InsertAnswer(turn));
  PTXB_RETURN_IF_ERROR(TransitTask(task, trajectory.model, event));
  if (response.cost_usd() > 0) {
    trajectory.cost_usd += response.cost_usd();
    PTXB_RETURN_IF_ERROR(experiment_rows_.AddCost(task.experiment, response.cost_usd()));
    experiments_.at(task.experiment).cost_usd += response.cost_usd();
  }
  if (response.simulated()) trajectory.simulated = true;
  return AddEvent(trajectory.experiment_id, trajectory.id, task.turn, "turn.answered",
                  absl::StrCat(response.provider(), " finish=", response.finish_reason(),
                               " tokens=", response.usage().input_tokens(), "/",
                               response.usage().output_tokens(), note));
}

// A synthesis answer (experiment_spec/synthesis.h): kept, never evaluated; the
// trajectory ends at the first whose text is within the length bounds, or
// asks again (afresh) until its passes are spent.
absl::Status Core::CompleteSynthesis(TaskRow& task, TrajectoryRow& trajectory,
                                     const v1::LlmResponse& response, AnswerRow turn) {
  const SynthesisSettings& s = *experiments_.at(task.experiment).synthesis;
  const int64_t chars = static_cast<int64_t>(
      (s.take == "reasoning" ? response.reasoning() : response.text()).size());
  // An answer cut off at its token limit is unfinished, whatever its length.
  const bool cut = response.finish_reason() == "length";
  const bool within = s.Within(chars) && !cut;
  if (!within) {
    PTXB_ASSIGN_OR_RETURN(
        turn.feedback_blob,
        storage::PutBlob(
            *db_, cut ? std::string("ptxbench: the answer was cut off at its token limit; asked "
                                    "again")
                      : absl::StrCat("ptxbench: the ", s.take, " has ", chars,
                                     " characters, outside [", s.min_chars, ", ",
                                     s.max_chars > 0 ? absl::StrCat(s.max_chars) : "any",
                                     "]; asked again")));
  }
  PTXB_RETURN_IF_ERROR(RecordAnswer(
      task, TaskEvent::kComplete, trajectory, response, std::move(turn),
      absl::StrCat(" ", s.take, "=", chars, " chars",
                   cut ? " (cut off)" : within ? "" : " (outside the bounds)")));
  if (!within) return AdvanceOrEnd(trajectory, task.turn, /*target_met=*/false);
  trajectory.correct = true;  // "correct": synthesized within the bounds
  trajectory.turns_completed = task.turn + 1;
  return Transit(trajectory, TrajectoryEvent::kTargetMet,
                 absl::StrCat("synthesized at pass ", task.turn + 1));
}

absl::Status Core::CompleteEval(TaskRow& task, TrajectoryRow& trajectory,
                                const v1::EvalResult& result) {
  const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
  // A profile's report is a blob of its own; the stored result names it.
  v1::EvalResult stored = result;
  if (stored.has_profile() && !stored.profile().report().empty()) {
    v1::KernelProfileRun* profile = stored.mutable_profile();
    profile->set_report_bytes(static_cast<int64_t>(profile->report().size()));
    PTXB_ASSIGN_OR_RETURN(*profile->mutable_report_blob(), storage::PutBlob(*db_, profile->report()));
    profile->clear_report();
  }
  PTXB_ASSIGN_OR_RETURN(std::string eval_blob,
                        storage::PutBlob(*db_, stored.SerializeAsString()));
  // The model reads only the part of the result it may see: its feedback and
  // the loop's target come from the shown workloads; the turn's verdict
  // (what the reports count) from all of them.
  // (A copy only where something is held out: every evaluation comes here.)
  v1::EvalResult shown_part;
  if (!trajectory.held_out.empty()) shown_part = verdict::ShownPart(result, HeldOutSet(trajectory));
  const v1::EvalResult& shown = trajectory.held_out.empty() ? result : shown_part;
  PTXB_ASSIGN_OR_RETURN(
      std::string feedback_blob,
      storage::PutBlob(*db_, RenderEvalFeedback(shown, trajectory.target_speedup)));
  const verdict::Verdict verdict = verdict::Judge(result);
  EvalRow row;
  row.eval_blob = std::move(eval_blob);
  row.status = result.status();
  row.correct = verdict.correct;
  row.shown_correct = verdict::Correct(shown);
  row.min_speedup = verdict.min_speedup;
  row.kernel_speedup = verdict.kernel_speedup;
  row.roofline = verdict.roofline;
  const verdict::Scores scores = verdict::WeightedScores(
      result, options_.workload_importance
                  ? verdict::WorkloadImportance([&](const std::string& workload) {
                      return options_.workload_importance(trajectory.definition, workload);
                    })
                  : nullptr);
  row.weighted_roofline = scores.weighted_roofline;
  row.sol_score = scores.sol_score;
  row.fallback_correct = verdict.fallback_correct;
  row.eval_ms = result.wall_time_ms();
  row.feedback_blob = std::move(feedback_blob);
  row.finished_ms = now_ms;
  PTXB_RETURN_IF_ERROR(turns_.RecordEval(trajectory.rowid, task.turn, row));
  PTXB_RETURN_IF_ERROR(TransitTask(task, trajectory.model, TaskEvent::kComplete));
  if (verdict.correct) {
    trajectory.correct = true;
    trajectory.best_speedup = std::max(trajectory.best_speedup, verdict.min_speedup);
  }
  if (result.simulated()) trajectory.simulated = true;
  PTXB_RETURN_IF_ERROR(AddEvent(
      trajectory.experiment_id, trajectory.id, task.turn, "turn.evaluated",
      absl::StrFormat("%s min_speedup=%.3f%s", v1::EvalStatus_Name(result.status()),
                      result.min_speedup(), result.simulated() ? " (simulated)" : "")));
  if (trajectory.state == v1::AWAITING_AGENT) return AgentTurnEvaluated(trajectory, task.turn);
  return AdvanceOrEnd(trajectory, task.turn,
                      verdict::TargetMet(shown, trajectory.target_speedup));
}

absl::Status Core::HandleFailure(TaskRow& next, TrajectoryRow& trajectory,
                                 const v1::TaskFailure& failure) {
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
  if (next.kind == StepKind::kAgent) {
    if (failure.has_agent_session()) {
      PTXB_RETURN_IF_ERROR(RecordAgentSession(trajectory, failure.agent_session()));
    }
    return EndOrRerunSession(next, trajectory, failure.failure_class(), failure.message(),
                             TaskEvent::kFail);
  }
  const char* kind = next.kind == StepKind::kLlm ? "LLM" : "eval";
  if (failure.failure_class() == v1::TERMINAL || failures >= limit) {
    PTXB_RETURN_IF_ERROR(TransitTask(next, trajectory.model, TaskEvent::kFail));
    std::string reason =
        failure.failure_class() == v1::TERMINAL
            ? failure.message()
            : absl::StrCat(kind, " step failed ", failures, " times; last: ", failure.message());
    return Transit(trajectory, TrajectoryEvent::kFail, reason, failure.failure_class());
  }
  absl::Duration wait = Backoff(failures);
  wait = std::max(wait, absl::Milliseconds(failure.retry_after_ms()));
  const absl::Time not_before = clock_->Now() + wait;
  PTXB_RETURN_IF_ERROR(TransitTask(next, trajectory.model, TaskEvent::kBackOff, not_before));
  return AddEvent(
      trajectory.experiment_id, trajectory.id, next.turn, "task.retry",
      absl::StrCat(v1::FailureClass_Name(failure.failure_class()), " failure ", failures, "/",
                   limit, ", retry in ", absl::FormatDuration(wait), ": ", failure.message()));
}

absl::Status Core::AdvanceOrEnd(TrajectoryRow& trajectory, int turn, bool target_met) {
  trajectory.turns_completed = turn + 1;
  if (target_met) {
    return Transit(trajectory, TrajectoryEvent::kTargetMet,
                   absl::StrFormat("target %.3fx met at turn %d", trajectory.target_speedup,
                                   turn));
  }
  if (trajectory.turns_completed >= trajectory.num_turns) {
    return Transit(trajectory, TrajectoryEvent::kTurnLimit,
                   absl::StrCat("turn limit of ", trajectory.num_turns, " reached"));
  }
  if (experiments_.at(trajectory.experiment).OverBudget()) return EndForBudget(trajectory);
  return Transit(trajectory, TrajectoryEvent::kNextTurn, "");
}

absl::Status Core::EndForBudget(TrajectoryRow& trajectory) {
  const ExperimentRow& exp = experiments_.at(trajectory.experiment);
  return Transit(trajectory, TrajectoryEvent::kOverBudget,
                 absl::StrFormat("experiment budget of $%.2f reached ($%.4f spent)",
                                 exp.max_cost_usd, exp.cost_usd));
}

}  // namespace ptxbench::scheduler
