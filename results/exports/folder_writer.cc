#include "results/exports/folder_writer.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ptxbench::exports {

namespace v1 = ::ptxbench::v1;

FolderWriter::FolderWriter(std::unique_ptr<OutputDir> dir, std::string name, bool one_experiment)
    : dir_(std::move(dir)), name_(std::move(name)), one_experiment_(one_experiment) {}

absl::Status FolderWriter::Check(absl::Status status) {
  if (!status.ok()) phase_ = Phase::kBroken;
  return status;
}

absl::Status FolderWriter::Refuse(absl::string_view call) const {
  switch (phase_) {
    case Phase::kBroken:
      return absl::FailedPreconditionError(
          absl::StrCat(call, ": the ", name_, " export failed earlier; nothing more is written"));
    case Phase::kFinished:
      return absl::FailedPreconditionError(absl::StrCat(call, ": the ", name_, " export in ",
                                                        dir_->final_path(), " is finished"));
    case Phase::kInExperiment:
      return absl::FailedPreconditionError(absl::StrCat(
          call, ": experiment ", experiment_.experiment_id(), " is not ended (EndExperiment)"));
    case Phase::kBetween:
      break;
  }
  return absl::FailedPreconditionError(absl::StrCat(call, ": no experiment begun (BeginExperiment)"));
}

absl::Status FolderWriter::BeginExperiment(const v1::Experiment& experiment,
                                           const std::vector<v1::DefinitionDocument>& definitions) {
  if (phase_ != Phase::kBetween) return Refuse("BeginExperiment");
  if (one_experiment_ && experiments_ > 0) {
    return Check(absl::InvalidArgumentError(absl::StrCat(
        "the ", name_, " format holds one experiment: ", experiment_.name(), " (",
        experiment_.experiment_id(), ") is exported already, so ", experiment.name(), " (",
        experiment.experiment_id(), ") needs an export of its own")));
  }
  experiment_ = experiment;
  ++experiments_;
  phase_ = Phase::kInExperiment;
  return Check(OnBegin(experiment, definitions));
}

absl::Status FolderWriter::Add(const v1::Trajectory& trajectory) {
  if (phase_ != Phase::kInExperiment) return Refuse("Add");
  const v1::TrajectorySummary& s = trajectory.summary();
  if (trajectory.continued()) {
    return Check(absl::InvalidArgumentError(absl::StrCat(
        "trajectory ", s.trajectory_id(), ": a continued part; exports take whole trajectories")));
  }
  if (!s.experiment_id().empty() && s.experiment_id() != experiment_.experiment_id()) {
    return Check(absl::InvalidArgumentError(
        absl::StrCat("trajectory ", s.trajectory_id(), " belongs to experiment ", s.experiment_id(),
                     ", not to ", experiment_.experiment_id(), " being exported")));
  }
  return Check(OnAdd(trajectory));
}

absl::Status FolderWriter::EndExperiment() {
  if (phase_ != Phase::kInExperiment) return Refuse("EndExperiment");
  phase_ = Phase::kBetween;
  return Check(OnEnd());
}

absl::Status FolderWriter::Finish() {
  if (phase_ != Phase::kBetween) return Refuse("Finish");
  if (absl::Status s = Check(OnFinish()); !s.ok()) return s;
  if (absl::Status s = Check(dir_->Commit()); !s.ok()) return s;
  phase_ = Phase::kFinished;
  return absl::OkStatus();
}

}  // namespace ptxbench::exports
