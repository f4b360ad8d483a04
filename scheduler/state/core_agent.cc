// Core: agent sessions (docs/AGENTS.md, "Sessions"). A trajectory in agent
// mode is one AGENT task, leased by a gateway that runs the session. Each
// evaluate call of the session becomes a turn: its kernel is the turn's
// answer and an ordinary eval task evaluates it, so workers, retries and
// feedback are those of the multiturn loop. The trajectory stays
// AWAITING_AGENT until the session ends.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "scheduler/state/core.h"
#include "storage/blob_store.h"
#include "verdict/verdict.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {
// An action id is the tool's own (a UUID); anything longer is not one.
constexpr size_t kMaxActionIdBytes = 128;
// As the evaluate tool's own limit (agent_tool/eval_wire.h).
constexpr size_t kMaxKernelBytes = 1 << 20;
}  // namespace

absl::StatusOr<v1::AgentEvalResponse> Core::AgentEval(const v1::AgentEvalRequest& request) {
  AssertOnWriterThread();
  PTXB_ASSIGN_OR_RETURN(int64_t rowid, ParseTaskId(request.lease().task_id()));
  const Lease* lease = leases_.Find(rowid);
  if (lease == nullptr || lease->lease_id != request.lease().lease_id()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "lease ", request.lease().lease_id(), " of task ", request.lease().task_id(),
        " is not current (the session ended, was cancelled or expired): stop the session"));
  }
  if (lease->executor != request.executor_id()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "lease ", request.lease().lease_id(), " is held by another executor"));
  }
  if (lease->kind != StepKind::kAgent) {
    return absl::InvalidArgumentError(
        absl::StrCat("task ", request.lease().task_id(), " is not an agent session"));
  }
  if (request.action_id().empty() || request.action_id().size() > kMaxActionIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("an evaluation needs an action id of 1 to ", kMaxActionIdBytes, " bytes"));
  }
  PTXB_ASSIGN_OR_RETURN(TaskRow task, tasks_.Read(rowid));
  PTXB_ASSIGN_OR_RETURN(TrajectoryRow trajectory, trajectories_.Read(task.trajectory));
  PTXB_ASSIGN_OR_RETURN(std::optional<int> turn,
                        turns_.FindAction(trajectory.rowid, request.action_id()));
  if (!turn) {
    PTXB_ASSIGN_OR_RETURN(turn, StartAgentTurn(trajectory, request));
  }
  return AgentTurnResult(trajectory, *turn);
}

absl::StatusOr<int> Core::StartAgentTurn(TrajectoryRow& trajectory,
                                         const v1::AgentEvalRequest& request) {
  const std::string& kernel = request.kernel_source();
  if (kernel.empty() || kernel.size() > kMaxKernelBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the kernel is empty or over ", kMaxKernelBytes, " bytes; nothing was evaluated"));
  }
  // Validated before anything is written: one evaluation in flight (the
  // session's own task is the other live one), within max_evaluations.
  PTXB_ASSIGN_OR_RETURN(std::vector<int64_t> live, tasks_.LiveOf(trajectory.rowid));
  const int turn = trajectory.turns_completed;
  if (live.size() > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "evaluation ", turn, " of this session is still running: wait for its feedback"));
  }
  if (trajectory.num_turns > 0 && turn >= trajectory.num_turns) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the session used its ", trajectory.num_turns, " evaluations (agent.max_evaluations)"));
  }
  const ExperimentRow& exp = experiments_.at(trajectory.experiment);
  if (request.profile() && !exp.profile) {
    return absl::FailedPreconditionError(
        "this experiment does not ask for profiles (\"profile\": true): nothing was evaluated");
  }
  const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
  PTXB_ASSIGN_OR_RETURN(std::string kernel_blob, storage::PutBlob(*db_, kernel));
  // The model calls that led to this kernel: the turn's tokens and cost.
  const v1::AgentUsage& usage = request.usage_since_last_eval();
  v1::LlmResponse meta;
  *meta.mutable_usage() = usage.usage();
  meta.set_cost_usd(usage.cost_usd());
  meta.set_latency_ms(usage.latency_ms());
  meta.set_model_calls(usage.model_calls());
  meta.set_provider(absl::StrCat("agent:", exp.agent->cli));
  meta.set_finish_reason("evaluate");
  AnswerRow row;
  row.trajectory = trajectory.rowid;
  row.turn = turn;
  // The kernel file as the agent left it is the turn's answer.
  row.answer_blob = kernel_blob;
  row.llm_meta = meta.SerializeAsString();
  row.kernel_blob = kernel_blob;
  row.kernel_sha256 = Sha256Hex(kernel);
  row.started_ms = now_ms;
  row.finished_ms = now_ms;
  row.action_id = request.action_id();
  row.profile = request.profile();
  PTXB_RETURN_IF_ERROR(turns_.InsertAnswer(row));
  PTXB_RETURN_IF_ERROR(AddAgentCost(trajectory, usage.cost_usd()));
  PTXB_RETURN_IF_ERROR(AddEvent(
      trajectory.experiment_id, trajectory.id, turn, "turn.answered",
      absl::StrCat("agent ", request.profile() ? "profile " : "evaluate ", request.action_id(),
                   " calls=", usage.model_calls(),
                   " tokens=", usage.usage().input_tokens(), "/",
                   usage.usage().output_tokens())));
  // Queues the eval task of turn turns_completed, this one.
  PTXB_RETURN_IF_ERROR(Transit(trajectory, TrajectoryEvent::kAgentEval, ""));
  return turn;
}

absl::StatusOr<v1::AgentEvalResponse> Core::AgentTurnResult(const TrajectoryRow& trajectory,
                                                            int turn) {
  PTXB_ASSIGN_OR_RETURN(TurnEval eval, turns_.Eval(trajectory.rowid, turn));
  v1::AgentEvalResponse out;
  out.set_turn(turn);
  if (eval.eval_blob.empty()) return out;
  PTXB_ASSIGN_OR_RETURN(std::string result, storage::GetBlob(*db_, eval.eval_blob));
  v1::EvalResult all;
  if (!all.ParseFromString(result)) {
    return absl::InternalError(absl::StrCat("unreadable evaluation blob ", eval.eval_blob));
  }
  // The session is told what its feedback says: the shown part.
  *out.mutable_result() = trajectory.held_out.empty()
                              ? std::move(all)
                              : verdict::ShownPart(all, HeldOutSet(trajectory));
  PTXB_ASSIGN_OR_RETURN(*out.mutable_feedback(), storage::GetBlob(*db_, eval.feedback_blob));
  out.set_done(true);
  return out;
}

absl::Status Core::AgentTurnEvaluated(TrajectoryRow& trajectory, int turn) {
  trajectory.turns_completed = std::max(trajectory.turns_completed, turn + 1);
  ++agent_eval_generation_;
  return Transit(trajectory, TrajectoryEvent::kAgentEvaluated, "");
}

absl::Status Core::AddAgentCost(TrajectoryRow& trajectory, double cost_usd) {
  if (!(cost_usd > 0)) return absl::OkStatus();
  trajectory.cost_usd += cost_usd;
  PTXB_RETURN_IF_ERROR(experiment_rows_.AddCost(trajectory.experiment, cost_usd));
  experiments_.at(trajectory.experiment).cost_usd += cost_usd;
  return absl::OkStatus();
}

absl::Status Core::RecordAgentSession(TrajectoryRow& trajectory, v1::AgentOutcome outcome) {
  PTXB_RETURN_IF_ERROR(AddAgentCost(trajectory, outcome.usage_since_last_eval().cost_usd()));
  // Each file of the record is a blob; the row keeps their hashes.
  for (v1::AgentRecord& record : *outcome.mutable_records()) {
    record.set_size(static_cast<int64_t>(record.content().size()));
    PTXB_ASSIGN_OR_RETURN(*record.mutable_blob(), storage::PutBlob(*db_, record.content()));
    record.clear_content();
  }
  return trajectories_.SetAgentOutcome(trajectory.rowid, outcome.SerializeAsString());
}

absl::Status Core::CompleteAgent(TaskRow& task, TrajectoryRow& trajectory,
                                 const v1::AgentOutcome& outcome) {
  PTXB_RETURN_IF_ERROR(RecordAgentSession(trajectory, outcome));
  PTXB_RETURN_IF_ERROR(TransitTask(task, trajectory.model, TaskEvent::kComplete));
  const v1::AgentUsage& total = outcome.total();
  std::string why = absl::StrCat(
      "the session ended (", v1::AgentEnd_Name(outcome.end()),
      outcome.reason().empty() ? "" : ": ", outcome.reason(), ") after ",
      trajectory.turns_completed, " evaluations, ", total.model_calls(), " model calls, ",
      total.usage().input_tokens() + total.usage().output_tokens(), " tokens");
  PTXB_RETURN_IF_ERROR(
      AddEvent(trajectory.experiment_id, trajectory.id, trajectory.turns_completed - 1,
               "agent.ended", why));
  // Only what ptxbench evaluated counts: the target is met when one of the
  // session's evaluations met it, whatever the agent said: best_speedup is
  // the largest minimum speedup of its correct turns (core_complete.cc).
  if (trajectory.correct &&
      verdict::ReachesTarget(trajectory.best_speedup, trajectory.target_speedup)) {
    return Transit(trajectory, TrajectoryEvent::kTargetMet,
                   absl::StrFormat("target %.3fx met (best %.3fx); %s",
                                   trajectory.target_speedup, trajectory.best_speedup, why));
  }
  return Transit(trajectory, TrajectoryEvent::kAgentEnded, why);
}

absl::Status Core::EndOrRerunSession(TaskRow& task, TrajectoryRow& trajectory,
                                     v1::FailureClass failure_class, const std::string& why,
                                     TaskEvent end_event) {
  task.last_error = why;
  PTXB_ASSIGN_OR_RETURN(const int turns, turns_.Count(trajectory.rowid));
  const int64_t max_sessions = experiments_.at(task.experiment).agent->max_sessions;
  const int lost = task.deaths + task.infra_failures + task.api_failures;
  std::string reason;
  if (failure_class == v1::TERMINAL) {
    reason = why;
  } else if (turns > 0) {
    reason = absl::StrCat("session ", task.attempt, " was lost after ", turns,
                          " evaluation(s), which are kept; it is not run again, so no other "
                          "session's results mix with them: ", why);
  } else if (lost >= max_sessions) {
    reason = absl::StrCat(lost, " sessions lost before any evaluation (agent.max_sessions is ",
                          max_sessions, "); last: ", why);
  }
  if (!reason.empty()) {
    PTXB_RETURN_IF_ERROR(TransitTask(task, trajectory.model, end_event));
    return Transit(trajectory, TrajectoryEvent::kFail, reason, failure_class);
  }
  const absl::Duration wait = Backoff(lost);
  PTXB_RETURN_IF_ERROR(
      TransitTask(task, trajectory.model, TaskEvent::kBackOff, clock_->Now() + wait));
  return AddEvent(trajectory.experiment_id, trajectory.id, 0, "task.retry",
                  absl::StrCat(v1::FailureClass_Name(failure_class), ": session lost before any "
                               "evaluation (", lost, " of ", max_sessions, "), run again in ",
                               absl::FormatDuration(wait), ": ", why));
}

}  // namespace ptxbench::scheduler
