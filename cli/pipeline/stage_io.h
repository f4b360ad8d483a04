#ifndef PTXBENCH_CLI_PIPELINE_STAGE_IO_H_
#define PTXBENCH_CLI_PIPELINE_STAGE_IO_H_

// Private to the pipeline stage runners (stages.cc,
// records.cc): what every stage reads and how its manifest names
// what it took.

#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "cli/client/client.h"
#include "cli/commands/commands.h"
#include "nlohmann/json.hpp"
#include "pipelines/pipeline.h"
#include "pipelines/stage_store.h"

namespace ptxbench::cli::stage_io {

// What a stage made: its files and what its manifest says of them (RunStage
// adds the times and the version).
struct StageOutput {
  std::map<std::string, std::string> files;
  nlohmann::json manifest;
};

// The experiment (id or name) a stage takes, once every trajectory of it
// has finished. With `wait` (pipeline run --wait) it waits, printing its
// progress; without, one still running is FAILED_PRECONDITION naming the
// stage.
absl::StatusOr<v1::GetExperimentResponse> FinishedExperiment(const Invocation& inv,
                                                             SchedulerClient& client,
                                                             const pipelines::Stage& stage,
                                                             const std::string& name);

// How a stage's manifest names an experiment, or an earlier stage, it took.
nlohmann::json ExperimentInput(const v1::GetExperimentResponse& e);
nlohmann::json StageInput(const pipelines::Stage& input);

// An earlier stage's manifest; FAILED_PRECONDITION when it has not run.
absl::StatusOr<nlohmann::json> RanManifest(const pipelines::StageStore& store,
                                           const pipelines::Stage& input);

// A file an earlier stage wrote, checked against the hash its manifest
// names, so what was changed on disk is refused rather than used.
absl::StatusOr<std::string> ReadStageFile(const pipelines::StageStore& store,
                                          const pipelines::Stage& input,
                                          const nlohmann::json& manifest, const std::string& name);

// A stage's `eval` parameter as the eval to submit with: "as-source" is
// compile-only when each of `sources` (experiment ids or names) was, else
// full, so one pipeline file serves a GPU and a machine without one.
absl::StatusOr<std::string> EvalOf(SchedulerClient& client, const pipelines::Stage& stage,
                                   const std::set<std::string>& sources);

// What made what `stage` makes (common/lineage.h): the stage, the stages
// back to the first and the experiments that one took.
nlohmann::json StageLineage(const pipelines::Pipeline& pipeline, const pipelines::Stage& stage);

// Trajectories read whole (prompts, answers, kernels, feedback), each once.
class FullTrajectories {
 public:
  explicit FullTrajectories(SchedulerClient& client) : client_(client) {}
  absl::StatusOr<const v1::Trajectory*> Get(const std::string& trajectory_id);

 private:
  SchedulerClient& client_;
  std::map<std::string, v1::Trajectory> read_;
};

// Submits a spec a stage made (named after it, its files with it) and says
// so on the error stream.
absl::StatusOr<v1::SubmitExperimentResponse> SubmitStageExperiment(
    const Invocation& inv, SchedulerClient& client, const pipelines::Pipeline& pipeline,
    const pipelines::Stage& stage, v1::SubmitExperimentRequest request, const std::string& what);

// The stages that write training records (records.cc): synthesize
// (submits its synthesis experiment, then collects it once finished) and
// dataset.
absl::StatusOr<StageOutput> RunSynthesize(const Invocation& inv, SchedulerClient& client,
                                          const pipelines::Pipeline& pipeline,
                                          const pipelines::Stage& stage,
                                          const pipelines::StageStore& store);
absl::StatusOr<StageOutput> RunDataset(const Invocation& inv, SchedulerClient& client,
                                       const pipelines::Pipeline& pipeline,
                                       const pipelines::Stage& stage,
                                       const pipelines::StageStore& store);

// The stages after training (evaluate.cc): model (registers a
// checkpoint served elsewhere, with its lineage) and evaluate (the same spec
// on the base and the tuned model, once both finished).
absl::StatusOr<StageOutput> RunModel(const Invocation& inv, SchedulerClient& client,
                                     const pipelines::Pipeline& pipeline,
                                     const pipelines::Stage& stage,
                                     const pipelines::StageStore& store);
absl::StatusOr<StageOutput> RunEvaluate(const Invocation& inv, SchedulerClient& client,
                                        const pipelines::Pipeline& pipeline,
                                        const pipelines::Stage& stage,
                                        const pipelines::StageStore& store);

}  // namespace ptxbench::cli::stage_io

#endif  // PTXBENCH_CLI_PIPELINE_STAGE_IO_H_
