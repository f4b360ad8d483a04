// The stages `ptxbench pipeline run` runs (stages.h).

#include "cli/pipeline/stages.h"

#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/pipeline/stage_io.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "pipelines/derive.h"
#include "pipelines/pairs.h"
#include "pipelines/select.h"

namespace ptxbench::cli {
namespace {

using stage_io::ExperimentInput;
using stage_io::FinishedExperiment;
using stage_io::RanManifest;
using stage_io::ReadStageFile;
using stage_io::StageInput;
using stage_io::StageOutput;

// A select stage over finished experiments: every judged turn of theirs,
// read as results, then the stage's choice.
absl::StatusOr<StageOutput> RunSelect(const Invocation& inv, SchedulerClient& client,
                                      const pipelines::Pipeline& pipeline,
                                      const pipelines::Stage& stage,
                                      const pipelines::StageStore& store) {
  std::vector<pipelines::Row> rows;
  nlohmann::json inputs = nlohmann::json::array();
  // Finished experiments named in the file, or the one a derive stage made.
  std::vector<std::string> experiments = stage.experiments;
  if (!stage.from.empty()) {
    const pipelines::Stage& input = *pipeline.Find(stage.from);
    PTXB_ASSIGN_OR_RETURN(nlohmann::json derived, RanManifest(store, input));
    experiments = {derived["experiment"].value("id", "")};
    inputs.push_back(StageInput(input));
  }
  for (const std::string& name : experiments) {
    PTXB_ASSIGN_OR_RETURN(v1::GetExperimentResponse e, FinishedExperiment(inv, client, stage, name));
    const std::string& id = e.experiment().experiment_id();
    v1::ReadTrajectoriesRequest request;
    request.set_experiment_id(id);
    request.set_detail(v1::TURN_DETAIL_RESULTS);
    const size_t before = rows.size();
    PTXB_RETURN_IF_ERROR(client.ReadTrajectories(request, [&](v1::Trajectory&& t) {
      for (pipelines::Row& r : pipelines::RowsOf(id, t)) rows.push_back(std::move(r));
      return absl::OkStatus();
    }));
    inv.err() << "  read " << name << " (" << id << "): " << e.progress().total()
              << " trajectories, " << rows.size() - before << " judged turns\n";
    inputs.push_back(ExperimentInput(e));
  }
  const pipelines::Selection selection = pipelines::Select(rows, stage.params);
  return StageOutput{{{"selection.jsonl", pipelines::SelectionJsonl(selection)}},
                     {{"inputs", std::move(inputs)},
                      {"counts", pipelines::SelectionCounts(selection)}}};
}

// A derive stage: each selected turn's kernel and feedback, read from the
// scheduler, become a fix-it item of a new experiment.
absl::StatusOr<StageOutput> RunDerive(const Invocation& inv, SchedulerClient& client,
                                      const pipelines::Pipeline& pipeline,
                                      const pipelines::Stage& stage,
                                      const pipelines::StageStore& store) {
  const pipelines::Stage& input = *pipeline.Find(stage.from);
  PTXB_ASSIGN_OR_RETURN(nlohmann::json selected, RanManifest(store, input));
  PTXB_ASSIGN_OR_RETURN(std::string selection,
                        ReadStageFile(store, input, selected, "selection.jsonl"));
  PTXB_ASSIGN_OR_RETURN(std::vector<pipelines::Row> rows,
                        pipelines::ReadSelectionJsonl(selection));
  if (rows.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("stage ", stage.name, ": stage ", input.name, " selected no rows"));
  }
  stage_io::FullTrajectories read(client);
  std::vector<pipelines::DeriveSource> sources;
  for (const pipelines::Row& row : rows) {
    PTXB_ASSIGN_OR_RETURN(const v1::Trajectory* t, read.Get(row.trajectory_id));
    if (row.turn < 0 || row.turn >= t->turns_size() ||
        t->turns(row.turn).kernel_sha256() != row.kernel_sha256) {
      return absl::DataLossError(absl::StrCat("stage ", stage.name, ": turn ", row.turn, " of ",
                                              row.trajectory_id,
                                              " is not the kernel the selection names"));
    }
    sources.push_back({row, t->turns(row.turn).kernel_source(), t->turns(row.turn).feedback()});
  }
  const pipelines::DerivedExperiment derived =
      pipelines::BuildDerivedExperiment(pipeline, stage, sources);
  std::set<std::string> origins;  // evaluated as these were
  for (const pipelines::Row& row : rows) origins.insert(row.experiment_id);
  PTXB_ASSIGN_OR_RETURN(const std::string eval, stage_io::EvalOf(client, stage, origins));
  v1::SubmitExperimentRequest request;
  request.set_spec_json(derived.spec_json);
  request.set_name(derived.name);
  request.set_model(stage.params["model"].get<std::string>());
  request.set_eval(eval);
  for (const auto& [path, content] : derived.files) (*request.mutable_files())[path] = content;
  PTXB_ASSIGN_OR_RETURN(v1::SubmitExperimentResponse submitted,
                        stage_io::SubmitStageExperiment(inv, client, pipeline, stage,
                                                        std::move(request), "fix-it trajectories"));
  return StageOutput{{{"items.jsonl", derived.items_jsonl}},
                     {{"inputs", nlohmann::json::array({StageInput(input)})},
                      {"experiment",
                       {{"id", submitted.experiment_id()},
                        {"name", derived.name},
                        {"spec_sha256", Sha256Hex(derived.spec_json)},
                        {"trajectories", submitted.trajectories()}}},
                      {"counts", {{"items", sources.size()}}}}};
}

// A pairs stage: the derive stage's experiment, once finished, and each
// wrong kernel with its fix.
absl::StatusOr<StageOutput> RunPairs(const Invocation& inv, SchedulerClient& client,
                                     const pipelines::Pipeline& pipeline,
                                     const pipelines::Stage& stage,
                                     const pipelines::StageStore& store) {
  const pipelines::Stage& input = *pipeline.Find(stage.from);
  PTXB_ASSIGN_OR_RETURN(nlohmann::json derive, RanManifest(store, input));
  PTXB_ASSIGN_OR_RETURN(std::string items_text,
                        ReadStageFile(store, input, derive, "items.jsonl"));
  PTXB_ASSIGN_OR_RETURN(std::vector<pipelines::Item> items,
                        pipelines::ReadItemsJsonl(items_text));
  const std::string derived_id = derive["experiment"].value("id", "");
  PTXB_ASSIGN_OR_RETURN(v1::GetExperimentResponse e,
                        FinishedExperiment(inv, client, stage, derived_id));
  std::vector<v1::Trajectory> derived;
  v1::ReadTrajectoriesRequest request;
  request.set_experiment_id(derived_id);
  request.set_detail(v1::TURN_DETAIL_RESULTS);
  PTXB_RETURN_IF_ERROR(client.ReadTrajectories(request, [&](v1::Trajectory&& t) {
    derived.push_back(std::move(t));
    return absl::OkStatus();
  }));
  const pipelines::Pairs pairs = pipelines::MakePairs(items, derived_id, derived, stage.params);
  inv.err() << "  read " << e.experiment().name() << " (" << derived_id << "): "
            << pairs.repaired << " of " << pairs.items << " wrong kernels repaired\n";
  return StageOutput{{{"pairs.jsonl", pipelines::PairsJsonl(pairs)}},
                     {{"inputs", nlohmann::json::array({StageInput(input), ExperimentInput(e)})},
                      {"counts", pipelines::PairsCounts(pairs)}}};
}

}  // namespace

absl::StatusOr<nlohmann::json> RunStage(const Invocation& inv, SchedulerClient& client,
                                        const pipelines::Pipeline& pipeline,
                                        const pipelines::Stage& stage,
                                        const pipelines::StageStore& store) {
  const int64_t started = absl::ToUnixMillis(absl::Now());
  auto run = stage.kind == "derive"       ? RunDerive
             : stage.kind == "pairs"      ? RunPairs
             : stage.kind == "synthesize" ? stage_io::RunSynthesize
             : stage.kind == "dataset"    ? stage_io::RunDataset
             : stage.kind == "model"      ? stage_io::RunModel
             : stage.kind == "evaluate"   ? stage_io::RunEvaluate
                                          : RunSelect;
  PTXB_ASSIGN_OR_RETURN(StageOutput out, run(inv, client, pipeline, stage, store));
  out.manifest["started_unix_ms"] = started;
  out.manifest["finished_unix_ms"] = absl::ToUnixMillis(absl::Now());
  out.manifest["ptxbench_version"] = PTXB_VERSION;
  return store.Write(pipeline, stage, out.files, std::move(out.manifest));
}

std::string StageSummary(const pipelines::Stage& stage, const nlohmann::json& manifest) {
  const nlohmann::json& counts = manifest["counts"];
  if (stage.kind == "derive") {
    const nlohmann::json& e = manifest["experiment"];
    return absl::StrCat("experiment ", e["name"].get<std::string>(), " (",
                        e["id"].get<std::string>(), "), ", e["trajectories"].dump(),
                        " fix-it trajectories; follow it with `ptxbench status ",
                        e["id"].get<std::string>(), " --watch`");
  }
  if (stage.kind == "synthesize") {
    return absl::StrCat(counts["synthesized"].dump(), " of ", counts["rows"].dump(),
                        " rows synthesized in ", counts["passes"].dump(), " passes");
  }
  if (stage.kind == "dataset") {
    return absl::StrCat(counts["records"].dump(), " records of ", counts["rows"].dump(),
                        " rows (", counts["not_synthesized"].dump(), " not synthesized, ",
                        counts["too_long"].dump(), " too long)");
  }
  if (stage.kind == "model") {
    return absl::StrCat("model ", manifest["model"]["name"].get<std::string>(),
                        " registered; serve it with a gateway started with --models "
                        "FOLDER/models.json");
  }
  if (stage.kind == "evaluate") {
    const nlohmann::json& h = manifest["headline"];
    return absl::StrCat("correct rate ", h["base"]["correct_rate"].dump(), " (base) -> ",
                        h["tuned"]["correct_rate"].dump(), " (tuned); ptxbench report ",
                        manifest["experiments"]["base"].get<std::string>(), " ",
                        manifest["experiments"]["tuned"].get<std::string>());
  }
  if (stage.kind == "pairs") {
    return absl::StrCat(counts["pairs"].dump(), " pairs, ", counts["repaired"].dump(), " of ",
                        counts["items"].dump(), " wrong kernels repaired");
  }
  return absl::StrCat("kept ", counts["kept"].dump(), " of ", counts["matched"].dump(),
                      " matching turns (", counts["candidates"].dump(), " judged)");
}

}  // namespace ptxbench::cli
