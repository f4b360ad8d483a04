#ifndef PTXBENCH_CLI_PIPELINE_STAGES_H_
#define PTXBENCH_CLI_PIPELINE_STAGES_H_

// The stages `ptxbench pipeline run` runs (docs/PIPELINES.md), each reading
// what it takes from the scheduler or from an earlier stage's folder and
// writing its own through the stage store. What each stage computes is
// pipelines/'s; this is where it meets the scheduler.

#include <string>

#include "absl/status/statusor.h"
#include "cli/client/client.h"
#include "cli/commands/commands.h"
#include "nlohmann/json.hpp"
#include "pipelines/pipeline.h"
#include "pipelines/stage_store.h"

namespace ptxbench::cli {

// Runs `stage` (whose inputs have run) and writes it; its manifest.
absl::StatusOr<nlohmann::json> RunStage(const Invocation& inv, SchedulerClient& client,
                                        const pipelines::Pipeline& pipeline,
                                        const pipelines::Stage& stage,
                                        const pipelines::StageStore& store);
// What a stage's manifest says, in a few words ("kept 45 of 48 matching turns").
std::string StageSummary(const pipelines::Stage& stage, const nlohmann::json& manifest);

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_PIPELINE_STAGES_H_
