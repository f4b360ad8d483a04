// What the pipeline stage runners share (stage_io.h).

#include "cli/pipeline/stage_io.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/status_macros.h"

namespace ptxbench::cli::stage_io {

absl::StatusOr<v1::GetExperimentResponse> FinishedExperiment(const Invocation& inv,
                                                             SchedulerClient& client,
                                                             const pipelines::Stage& stage,
                                                             const std::string& name) {
  const bool wait = inv.args.Has("wait");
  int64_t shown = -1;
  absl::Time said = absl::InfinitePast();
  while (true) {
    PTXB_ASSIGN_OR_RETURN(v1::GetExperimentResponse e, client.GetExperiment(name));
    const v1::ExperimentProgress& p = e.progress();
    if (p.terminal() >= p.total()) return e;
    if (!wait) {
      return absl::FailedPreconditionError(absl::StrCat(
          "stage '", stage.name, "': experiment ", e.experiment().name(), " is still running (",
          p.terminal(), " of ", p.total(),
          " trajectories finished); run the stage once it has finished, or with --wait"));
    }
    // On progress, and every half minute without (`ptxbench status` says
    // what an experiment waits for: a worker, a gateway for its model).
    if (p.terminal() != shown || absl::Now() - said > absl::Seconds(30)) {
      inv.err() << "  waiting for " << e.experiment().name() << ": " << p.terminal() << " of "
                << p.total() << " trajectories finished"
                << (p.terminal() == shown ? absl::StrCat("; `ptxbench status ",
                                                         e.experiment().experiment_id(),
                                                         "` says what it waits for")
                                          : "")
                << "\n";
      shown = p.terminal();
      said = absl::Now();
    }
    absl::SleepFor(absl::Seconds(1));
  }
}

nlohmann::json ExperimentInput(const v1::GetExperimentResponse& e) {
  return {{"kind", "experiment"},
          {"name", e.experiment().name()},
          {"id", e.experiment().experiment_id()},
          {"spec_sha256", Sha256Hex(e.experiment().spec_json())},
          {"trajectories", e.progress().total()}};
}

nlohmann::json StageInput(const pipelines::Stage& input) {
  return {{"kind", "stage"}, {"stage", input.name}, {"id", input.id}};
}

absl::StatusOr<nlohmann::json> RanManifest(const pipelines::StageStore& store,
                                           const pipelines::Stage& input) {
  std::optional<nlohmann::json> manifest = store.Manifest(input);
  if (!manifest) {
    return absl::FailedPreconditionError(
        absl::StrCat("stage ", input.name, " has not run yet: run it first"));
  }
  return *std::move(manifest);
}

absl::StatusOr<std::string> ReadStageFile(const pipelines::StageStore& store,
                                          const pipelines::Stage& input,
                                          const nlohmann::json& manifest, const std::string& name) {
  const std::string path = store.Folder(input) + "/" + name;
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  if (Sha256Hex(text) != pipelines::StageStore::OutputSha256(manifest, name)) {
    return absl::DataLossError(absl::StrCat(
        path, " is not the file its manifest names (its sha256 differs): remove ",
        store.Folder(input), " and run the stage again"));
  }
  return text;
}

nlohmann::json StageLineage(const pipelines::Pipeline& pipeline, const pipelines::Stage& stage) {
  nlohmann::json from = nlohmann::json::array();
  const pipelines::Stage* s = &stage;
  while (!s->from.empty()) {
    s = pipeline.Find(s->from);
    from.push_back({{"stage", s->name}, {"kind", s->kind}, {"stage_id", s->id}});
  }
  return {{"pipeline", pipeline.name}, {"stage", stage.name},     {"kind", stage.kind},
          {"stage_id", stage.id},      {"from", std::move(from)}, {"experiments", s->experiments}};
}

absl::StatusOr<std::string> EvalOf(SchedulerClient& client, const pipelines::Stage& stage,
                                   const std::set<std::string>& sources) {
  const std::string eval = stage.params["eval"].get<std::string>();
  if (eval != "as-source") return eval;
  for (const std::string& id : sources) {
    PTXB_ASSIGN_OR_RETURN(v1::GetExperimentResponse e, client.GetExperiment(id));
    if (e.experiment().eval_mode() != v1::COMPILE_ONLY) return std::string("full");
  }
  return std::string("compile-only");
}

absl::StatusOr<const v1::Trajectory*> FullTrajectories::Get(const std::string& trajectory_id) {
  auto it = read_.find(trajectory_id);
  if (it != read_.end()) return &it->second;
  v1::ReadTrajectoriesRequest request;
  request.set_trajectory_id(trajectory_id);
  request.set_detail(v1::TURN_DETAIL_FULL);
  bool found = false;
  PTXB_RETURN_IF_ERROR(client_.ReadTrajectories(request, [&](v1::Trajectory&& t) {
    read_[trajectory_id] = std::move(t);
    found = true;
    return absl::OkStatus();
  }));
  if (!found) return absl::NotFoundError(absl::StrCat("no trajectory ", trajectory_id));
  return &read_[trajectory_id];
}

absl::StatusOr<v1::SubmitExperimentResponse> SubmitStageExperiment(
    const Invocation& inv, SchedulerClient& client, const pipelines::Pipeline& pipeline,
    const pipelines::Stage& stage, v1::SubmitExperimentRequest request, const std::string& what) {
  request.set_spec_path(absl::StrCat(pipeline.name, ":", stage.name));
  request.set_lineage_json(StageLineage(pipeline, stage).dump());
  const std::string name = request.name();
  PTXB_ASSIGN_OR_RETURN(v1::SubmitExperimentResponse submitted, client.SubmitExperiment(request));
  inv.err() << "  submitted " << name << " (" << submitted.experiment_id()
            << "): " << submitted.trajectories() << " " << what
            << (submitted.created() ? "" : " (it existed already with this spec)") << "\n";
  return submitted;
}

}  // namespace ptxbench::cli::stage_io
