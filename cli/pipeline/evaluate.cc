// The pipeline stages after training (stage_io.h): model registers
// the checkpoint trained elsewhere on a dataset stage's records as a model
// the gateways can serve, with its lineage; evaluate runs one spec on it and
// on its base and records both experiments and their numbers.

#include <algorithm>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/client/submit.h"
#include "cli/pipeline/stage_io.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/proto_json.h"
#include "common/status_macros.h"

namespace ptxbench::cli::stage_io {
namespace {

// A path of the pipeline file's (the command's first argument).
std::string PipelinePath(const Invocation& inv, const std::string& path) {
  return pipelines::PipelinePath(inv.args.positionals[0], path);
}

// The first select stages on the way back from `stage`: the finished
// experiments the pipeline began with.
std::vector<std::string> SourceExperiments(const pipelines::Pipeline& pipeline,
                                           const pipelines::Stage& stage) {
  const pipelines::Stage* s = &stage;
  while (!s->from.empty()) s = pipeline.Find(s->from);
  return s->experiments;
}

// The numbers an evaluation is read by, of one experiment.
nlohmann::json Headline(const v1::ExperimentReport& e) {
  const v1::GroupReport& t = e.total();
  nlohmann::json fast_p = nlohmann::json::object();
  for (const v1::FastP& f : t.fast_p()) fast_p[absl::StrCat(f.p())] = f.rate();
  return {{"trajectories", t.trajectories()},    {"correct", t.correct()},
          {"correct_rate", t.correct_rate()},    {"target_met_rate", t.target_met_rate()},
          {"geomean_speedup", t.geomean_speedup()}, {"fast_p", fast_p},
          {"cost_usd", t.cost_usd()}};
}

// FAILED_PRECONDITION unless an active gateway serves `model`: the stage
// would otherwise wait for ever for its answers.
absl::Status CheckServed(SchedulerClient& client, const pipelines::Stage& stage,
                         const std::string& model, const std::string& how) {
  PTXB_ASSIGN_OR_RETURN(v1::ListExecutorsResponse executors, client.ListExecutors());
  for (const v1::ExecutorInfo& e : executors.executors()) {
    if (e.kind() != v1::GATEWAY || e.status() != "active") continue;
    const v1::Capabilities& c = e.capabilities();
    if (c.serves_any_model() ||
        std::find(c.models().begin(), c.models().end(), model) != c.models().end()) {
      return absl::OkStatus();
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "stage '", stage.name, "': no active gateway serves model ", model, "; ", how));
}

}  // namespace

absl::StatusOr<StageOutput> RunModel(const Invocation& inv, SchedulerClient&,
                                     const pipelines::Pipeline& pipeline,
                                     const pipelines::Stage& stage,
                                     const pipelines::StageStore& store) {
  const pipelines::Stage& input = *pipeline.Find(stage.from);
  PTXB_ASSIGN_OR_RETURN(nlohmann::json dataset, RanManifest(store, input));
  PTXB_ASSIGN_OR_RETURN(std::string manifest_text, ReadFile(store.ManifestPath(input)));
  const nlohmann::json& p = stage.params;
  const std::string name = p["model"].get<std::string>();
  const nlohmann::json lineage = {
      {"pipeline", pipeline.name},
      {"stage", stage.name},
      {"stage_id", stage.id},
      {"dataset", {{"stage", input.name},
                   {"stage_id", input.id},
                   {"manifest_sha256", Sha256Hex(manifest_text)},
                   {"sft_jsonl_sha256",
                    pipelines::StageStore::OutputSha256(dataset, "sft.jsonl")},
                   {"records", dataset["counts"].value("records", int64_t{0})}}},
      {"checkpoint", p["checkpoint"]}};
  nlohmann::json entry = {{"provider", p["provider"]},
                          {"notes", absl::StrCat("checkpoint ", p["checkpoint"].get<std::string>(),
                                                 ", trained on the records of stage ", input.name,
                                                 " of pipeline ", pipeline.name)},
                          {"lineage", lineage}};
  if (p["provider"] == "scripted") {
    entry["answers_dir"] = PipelinePath(inv, p["answers_dir"].get<std::string>());
  } else {
    entry["base_url"] = p["base_url"];
    entry["model_id"] = p["model_id"];
    if (p.contains("api_key_env")) entry["api_key_env"] = p["api_key_env"];
  }
  inv.err() << "  model " << name << ": checkpoint " << p["checkpoint"].get<std::string>()
            << ", lineage to dataset " << input.name << "\n";
  return StageOutput{
      {{"models.json", nlohmann::json({{"models", {{name, entry}}}}).dump(2) + "\n"}},
      {{"inputs", nlohmann::json::array({StageInput(input)})},
       {"model", {{"name", name}, {"provider", p["provider"]}, {"checkpoint", p["checkpoint"]}}},
       {"lineage", lineage},
       {"counts", {{"models", 1}}}}};
}

absl::StatusOr<StageOutput> RunEvaluate(const Invocation& inv, SchedulerClient& client,
                                        const pipelines::Pipeline& pipeline,
                                        const pipelines::Stage& stage,
                                        const pipelines::StageStore& store) {
  const pipelines::Stage& input = *pipeline.Find(stage.from);
  PTXB_ASSIGN_OR_RETURN(nlohmann::json registered, RanManifest(store, input));
  const std::string tuned = registered["model"].value("name", "");
  const std::string base = stage.params["base"].get<std::string>();
  const std::string spec = PipelinePath(inv, stage.params["spec"].get<std::string>());
  PTXB_ASSIGN_OR_RETURN(std::string spec_text, ReadFile(spec));
  PTXB_RETURN_IF_ERROR(CheckServed(client, stage, base, "start a gateway that serves it"));
  PTXB_RETURN_IF_ERROR(CheckServed(
      client, stage, tuned,
      absl::StrCat("start a gateway with --models ", store.Folder(input), "/models.json")));
  // Evaluated as the experiments the pipeline began with.
  const std::vector<std::string> sources = SourceExperiments(pipeline, stage);
  PTXB_ASSIGN_OR_RETURN(const std::string eval,
                        EvalOf(client, stage, {sources.begin(), sources.end()}));
  const std::string prefix =
      absl::StrCat(pipeline.name, ".", stage.name, ".", stage.id.substr(3, 12));
  std::vector<std::string> ids;
  for (const auto& [role, model] : {std::pair{"base", base}, std::pair{"tuned", tuned}}) {
    v1::SubmitExperimentRequest request;
    request.set_name(absl::StrCat(prefix, ".", role));
    request.set_model(model);
    request.set_eval(eval);
    nlohmann::json lineage = StageLineage(pipeline, stage);
    lineage["role"] = role;
    request.set_lineage_json(lineage.dump());
    std::ostringstream out;
    PTXB_ASSIGN_OR_RETURN(std::string id, SubmitSpecFile(client, spec, std::move(request),
                                                         /*json=*/false, out, inv.err()));
    inv.err() << "  submitted " << prefix << "." << role << " (" << id << "): " << model << " on "
              << stage.params["spec"].get<std::string>() << ", eval " << eval << "\n";
    ids.push_back(id);
  }
  nlohmann::json inputs = nlohmann::json::array({StageInput(input)});
  for (const std::string& id : ids) {
    PTXB_ASSIGN_OR_RETURN(v1::GetExperimentResponse e, FinishedExperiment(inv, client, stage, id));
    inputs.push_back(ExperimentInput(e));
  }
  v1::ReportRequest request;
  for (const std::string& id : ids) request.add_experiment_ids(id);
  PTXB_ASSIGN_OR_RETURN(v1::ReportResponse report, client.GetReport(request));
  if (report.experiments_size() != 2) {
    return absl::InternalError("the scheduler's report left out an experiment");
  }
  const nlohmann::json b = Headline(report.experiments(0)), t = Headline(report.experiments(1));
  PTXB_ASSIGN_OR_RETURN(const std::string base_total, ProtoJson(report.experiments(0).total()));
  PTXB_ASSIGN_OR_RETURN(const std::string tuned_total, ProtoJson(report.experiments(1).total()));
  nlohmann::json difference = nlohmann::json::object();
  for (const char* key : {"correct_rate", "target_met_rate", "geomean_speedup"}) {
    difference[key] = t[key].get<double>() - b[key].get<double>();
  }
  const nlohmann::json evaluation = {
      {"format", "ptxbench.evaluation.v1"},
      {"spec", stage.params["spec"]},
      {"spec_sha256", Sha256Hex(spec_text)},
      {"eval", eval},
      {"metrics_version", report.metrics_version()},
      {"base", {{"model", base}, {"experiment_id", ids[0]}, {"headline", b},
                {"total", nlohmann::json::parse(base_total)}}},
      {"tuned", {{"model", tuned}, {"experiment_id", ids[1]}, {"headline", t},
                 {"total", nlohmann::json::parse(tuned_total)},
                 {"lineage", registered["lineage"]}}},
      {"tuned_minus_base", difference}};
  inv.err() << "  correct rate " << b["correct_rate"].dump() << " (" << base << ") -> "
            << t["correct_rate"].dump() << " (" << tuned << "); `ptxbench report " << ids[0]
            << " " << ids[1] << "` shows the whole comparison\n";
  return StageOutput{{{"evaluation.json", evaluation.dump(2) + "\n"}},
                     {{"inputs", inputs},
                      {"experiments", {{"base", ids[0]}, {"tuned", ids[1]}}},
                      {"headline", {{"base", b}, {"tuned", t}, {"tuned_minus_base", difference}}},
                      {"counts", {{"experiments", 2}}}}};
}

}  // namespace ptxbench::cli::stage_io
