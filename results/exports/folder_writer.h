#ifndef PTXBENCH_RESULTS_EXPORTS_FOLDER_WRITER_H_
#define PTXBENCH_RESULTS_EXPORTS_FOLDER_WRITER_H_

// What every export shares: its folder (results/exports/output_dir.h) and the order
// of calls (BeginExperiment, Add..., EndExperiment, repeated; Finish), so a
// format writes only its files. A call out of order is kFailedPrecondition;
// after any error every later call fails, and the folder never appears.

#include <memory>
#include <string>
#include <vector>

#include "results/exports/export.h"
#include "results/exports/output_dir.h"

namespace ptxbench::exports {

class FolderWriter : public Writer {
 public:
  absl::Status BeginExperiment(const ptxbench::v1::Experiment& experiment,
                               const std::vector<ptxbench::v1::DefinitionDocument>& definitions) final;
  absl::Status Add(const ptxbench::v1::Trajectory& trajectory) final;
  absl::Status EndExperiment() final;
  absl::Status Finish() final;

 protected:
  // `name` is the format's, for messages; `one_experiment` refuses a second.
  FolderWriter(std::unique_ptr<OutputDir> dir, std::string name, bool one_experiment);

  const OutputDir& dir() const { return *dir_; }
  // The current (or last) experiment.
  const ptxbench::v1::Experiment& experiment() const { return experiment_; }
  int experiments_begun() const { return experiments_; }

  // The format's part of each call; the order is checked already.
  virtual absl::Status OnBegin(const ptxbench::v1::Experiment& experiment,
                               const std::vector<ptxbench::v1::DefinitionDocument>& definitions) = 0;
  virtual absl::Status OnAdd(const ptxbench::v1::Trajectory& trajectory) = 0;
  virtual absl::Status OnEnd() { return absl::OkStatus(); }
  // Writes the last files and closes every file; the folder moves after.
  virtual absl::Status OnFinish() = 0;

 private:
  enum class Phase { kBetween, kInExperiment, kFinished, kBroken };

  // Records a failure: nothing more is accepted.
  absl::Status Check(absl::Status status);
  absl::Status Refuse(absl::string_view call) const;

  std::unique_ptr<OutputDir> dir_;
  const std::string name_;
  const bool one_experiment_;
  Phase phase_ = Phase::kBetween;
  int experiments_ = 0;
  ptxbench::v1::Experiment experiment_;
};

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_FOLDER_WRITER_H_
