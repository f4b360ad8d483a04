// Core: submitting an experiment, whole or in parts (core.h, StagedSubmit).
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "scheduler/state/core.h"
#include "storage/blob_store.h"

namespace ptxbench::scheduler {

using experiment_spec::ExpandedExperiment;
using experiment_spec::RenderedPrompts;
using experiment_spec::TaskPromptKey;
using experiment_spec::TrajectorySpec;

namespace v1 = ::ptxbench::v1;

namespace {

StepKind FirstStep(const ExpandedExperiment& x) {
  // Agent mode: each trajectory starts as one session (docs/AGENTS.md).
  return x.agent ? StepKind::kAgent : StepKind::kLlm;
}

}  // namespace

absl::StatusOr<SubmitOutcome> Core::Submit(const ExpandedExperiment& x,
                                           const RenderedPrompts& prompts) {
  PTXB_ASSIGN_OR_RETURN(StagedSubmit staged, BeginSubmit(x, prompts));
  if (!staged.outcome.created) return staged.outcome;
  PTXB_RETURN_IF_ERROR(SubmitPart(x, x.trajectories.size(), staged));
  PTXB_RETURN_IF_ERROR(FinishSubmit(x, staged));
  return staged.outcome;
}

absl::StatusOr<StagedSubmit> Core::BeginSubmit(const ExpandedExperiment& x,
                                               const RenderedPrompts& prompts) {
  AssertOnWriterThread();
  const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
  PTXB_ASSIGN_OR_RETURN(std::optional<ExistingExperiment> existing,
                        experiment_rows_.FindByName(x.name));
  StagedSubmit staged;
  if (existing) {
    if (existing->spec_hash != x.spec_hash) {
      return absl::AlreadyExistsError(absl::StrCat(
          "experiment '", x.name, "' already exists with a different spec; ",
          "submit under another name (--name) or cancel the old one"));
    }
    if (existing->staged) {
      return absl::FailedPreconditionError(absl::StrCat(
          "experiment '", x.name, "' is being submitted by another call; ask again when it is "
          "done (`ptxbench status ", x.name, "`)"));
    }
    staged.outcome = SubmitOutcome{existing->id, false, existing->trajectories};
    return staged;
  }
  // Refused before anything is written, and before any model is called.
  PTXB_RETURN_IF_ERROR(CheckPyTorchReferences(x));
  PTXB_RETURN_IF_ERROR(CheckAgentClis(x));
  PTXB_RETURN_IF_ERROR(CheckProfilers(x));
  PTXB_RETURN_IF_ERROR(CheckSanitizers(x));
  PTXB_RETURN_IF_ERROR(CheckTriton(x));
  // Every prompt must be rendered before anything is written.
  int max_turns = 0;
  for (const TrajectorySpec& t : x.trajectories) {
    max_turns = std::max(max_turns, t.num_turns);
    if (!staged.system_hash.count(t.prompt_tag)) {
      if (!prompts.system_by_tag.count(t.prompt_tag)) {
        return absl::InternalError(absl::StrCat("no rendered system prompt for ", t.prompt_tag));
      }
      staged.system_hash[t.prompt_tag] = "";
    }
    std::string key = TaskPromptKey(t);
    if (!staged.task_hash.count(key)) {
      if (!prompts.task_by_key.count(key)) {
        return absl::InternalError(absl::StrCat("no rendered task prompt for ", key));
      }
      staged.task_hash[key] = "";
    }
  }
  for (auto& [tag, hash] : staged.system_hash) {
    PTXB_ASSIGN_OR_RETURN(hash, storage::PutBlob(*db_, prompts.system_by_tag.at(tag)));
  }
  for (auto& [key, hash] : staged.task_hash) {
    PTXB_ASSIGN_OR_RETURN(hash, storage::PutBlob(*db_, prompts.task_by_key.at(key)));
  }
  PTXB_ASSIGN_OR_RETURN(staged.experiment, experiment_rows_.Insert(x, max_turns, now_ms));
  staged.outcome =
      SubmitOutcome{x.experiment_id, true, static_cast<int64_t>(x.trajectories.size())};
  staged.queued.reserve(x.trajectories.size());
  return staged;
}

absl::Status Core::SubmitPart(const ExpandedExperiment& x, size_t max_trajectories,
                              StagedSubmit& staged) {
  AssertOnWriterThread();
  const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
  const StepKind first_step = FirstStep(x);
  const v1::TrajectoryState first_state = x.agent ? v1::AWAITING_AGENT : v1::AWAITING_MODEL;
  const bool starters = x.agent && x.agent->starter == "fixit";
  const size_t end = staged.written + std::min(max_trajectories, x.trajectories.size() - staged.written);
  // Rows and tasks are counted only once the part's writes all succeeded:
  // a failed part's op is rolled back whole.
  std::vector<std::pair<int64_t, const std::string*>> queued;
  for (size_t i = staged.written; i < end; ++i) {
    const TrajectorySpec& t = x.trajectories[i];
    std::string starter;
    if (starters) {
      PTXB_ASSIGN_OR_RETURN(
          starter, storage::PutBlob(*db_, nlohmann::json{{"kernel", t.repair_kernel},
                                                         {"log", t.repair_log}}
                                              .dump()));
    }
    PTXB_ASSIGN_OR_RETURN(
        const int64_t trajectory,
        trajectories_.Insert(t, staged.experiment, staged.system_hash.at(t.prompt_tag),
                             staged.task_hash.at(TaskPromptKey(t)), first_state, now_ms,
                             starter));
    PTXB_ASSIGN_OR_RETURN(const int64_t task, tasks_.Insert(staged.experiment, trajectory,
                                                            /*turn=*/0, first_step, now_ms));
    queued.emplace_back(task, &t.model);
  }
  staged.queued.insert(staged.queued.end(), queued.begin(), queued.end());
  staged.written = end;
  return absl::OkStatus();
}

absl::Status Core::FinishSubmit(const ExpandedExperiment& x, StagedSubmit& staged) {
  AssertOnWriterThread();
  if (staged.written != x.trajectories.size()) {
    return absl::InternalError(absl::StrCat("experiment '", x.name, "': ", staged.written, " of ",
                                            x.trajectories.size(),
                                            " trajectories written at its finish"));
  }
  PTXB_RETURN_IF_ERROR(experiment_rows_.Show(staged.experiment));
  PTXB_RETURN_IF_ERROR(AddEvent(
      x.experiment_id, "", -1, "experiment.submitted",
      absl::StrCat(x.trajectories.size(), " trajectories, priority ", x.priority)));

  // Memory changes only after every write succeeded.
  const int64_t exp_rowid = staged.experiment;
  ExperimentRow info;
  info.rowid = exp_rowid;
  info.id = x.experiment_id;
  info.language = x.language;
  info.context_policy = x.context_policy;
  info.eval_mode = x.eval_mode;
  info.priority = x.priority;
  info.max_cost_usd = x.max_cost_usd;
  info.architectures = x.architectures;
  info.profile = x.profile;
  info.memcheck = x.memcheck;
  info.agent = x.agent;
  info.synthesis = x.synthesis;
  experiments_[exp_rowid] = info;
  llm_ready_.SetWeight(exp_rowid, x.priority);
  eval_ready_.SetWeight(exp_rowid, x.priority);
  agent_ready_.SetWeight(exp_rowid, x.priority);
  const StepKind first_step = FirstStep(x);
  for (const auto& [task, model] : staged.queued) {
    PushReady(task, ReadyRef{exp_rowid, first_step, RouteKey(exp_rowid, first_step, *model)});
  }
  staged.queued.clear();
  return absl::OkStatus();
}

absl::StatusOr<bool> Core::AbandonSubmitPart(const StagedSubmit& staged, int64_t max_rows) {
  AssertOnWriterThread();
  return experiment_rows_.DeleteStagedPart(staged.experiment, max_rows);
}

absl::Status Core::DeleteStagedExperiments() {
  PTXB_ASSIGN_OR_RETURN(std::vector<int64_t> staged, experiment_rows_.Staged());
  for (int64_t rowid : staged) {
    PTXB_ASSIGN_OR_RETURN(
        bool gone, experiment_rows_.DeleteStagedPart(rowid, std::numeric_limits<int64_t>::max()));
    if (!gone) return absl::InternalError(absl::StrCat("staged experiment #", rowid, " remains"));
  }
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
