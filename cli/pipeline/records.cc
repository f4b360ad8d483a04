// The pipeline stages that write training records (stage_io.h):
// synthesize and dataset. The texts they need (prompts, answers, kernels,
// feedback) are read from the scheduler by the turns their input names, so
// no stage folder holds a copy of a kernel.

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/pipeline/stage_io.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "pipelines/dataset.h"
#include "pipelines/synthesize.h"

namespace ptxbench::cli::stage_io {
namespace {

// The turn `ref` names, checked to be one of its trajectory.
absl::StatusOr<const v1::Turn*> TurnOf(FullTrajectories& read, const pipelines::Stage& stage,
                                       const pipelines::TurnRef& ref,
                                       const v1::Trajectory** trajectory = nullptr) {
  PTXB_ASSIGN_OR_RETURN(const v1::Trajectory* t, read.Get(ref.trajectory_id));
  if (ref.turn < 0 || ref.turn >= t->turns_size()) {
    return absl::DataLossError(absl::StrCat("stage ", stage.name, ": ", ref.trajectory_id,
                                            " has no turn ", ref.turn));
  }
  if (trajectory != nullptr) *trajectory = t;
  return &t->turns(ref.turn);
}

}  // namespace

absl::StatusOr<StageOutput> RunSynthesize(const Invocation& inv, SchedulerClient& client,
                                          const pipelines::Pipeline& pipeline,
                                          const pipelines::Stage& stage,
                                          const pipelines::StageStore& store) {
  const pipelines::Stage& input = *pipeline.Find(stage.from);
  PTXB_ASSIGN_OR_RETURN(nlohmann::json took, RanManifest(store, input));
  const bool pairs = input.kind == "pairs";
  PTXB_ASSIGN_OR_RETURN(
      std::string text,
      ReadStageFile(store, input, took, pairs ? "pairs.jsonl" : "selection.jsonl"));
  PTXB_ASSIGN_OR_RETURN(std::vector<pipelines::SynthesisRow> rows,
                        pairs ? pipelines::ReadPairsForSynthesis(text)
                              : pipelines::ReadSelectionForSynthesis(text));
  if (rows.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("stage ", stage.name, ": stage ", input.name, " has no rows"));
  }
  FullTrajectories read(client);
  std::vector<pipelines::SynthesisTexts> texts;
  for (const pipelines::SynthesisRow& row : rows) {
    pipelines::SynthesisTexts x;
    const v1::Trajectory* source = nullptr;
    PTXB_ASSIGN_OR_RETURN(const v1::Turn* kernel, TurnOf(read, stage, row.kernel, &source));
    x.kernel = kernel->kernel_source();
    x.task_prompt = source->task_prompt();
    if (row.wrong) {
      const v1::Trajectory* base = nullptr;
      PTXB_ASSIGN_OR_RETURN(const v1::Turn* wrong, TurnOf(read, stage, *row.wrong, &base));
      x.wrong_kernel = wrong->kernel_source();
      x.wrong_feedback = wrong->feedback();
      x.task_prompt = base->task_prompt();  // the task as the base model saw it
    }
    texts.push_back(std::move(x));
  }
  const pipelines::SynthesisExperiment x =
      pipelines::BuildSynthesisExperiment(pipeline, stage, rows, texts);
  v1::SubmitExperimentRequest request;
  request.set_spec_json(x.spec_json);
  request.set_name(x.name);
  for (const auto& [path, content] : x.files) (*request.mutable_files())[path] = content;
  PTXB_ASSIGN_OR_RETURN(v1::SubmitExperimentResponse submitted,
                        SubmitStageExperiment(inv, client, pipeline, stage, std::move(request),
                                              "rows to synthesize"));
  PTXB_ASSIGN_OR_RETURN(v1::GetExperimentResponse e,
                        FinishedExperiment(inv, client, stage, submitted.experiment_id()));
  std::vector<v1::Trajectory> trajectories;
  v1::ReadTrajectoriesRequest all;
  all.set_experiment_id(submitted.experiment_id());
  all.set_detail(v1::TURN_DETAIL_FULL);
  PTXB_RETURN_IF_ERROR(client.ReadTrajectories(all, [&](v1::Trajectory&& t) {
    trajectories.push_back(std::move(t));
    return absl::OkStatus();
  }));
  const pipelines::Synthesis s = pipelines::CollectSynthesis(stage, rows, trajectories);
  const pipelines::SynthesisTemplate& t =
      pipelines::FindTemplate(stage.params["template"].get<std::string>());
  inv.err() << "  read " << x.name << ": " << s.counts["synthesized"].dump() << " of "
            << rows.size() << " rows synthesized\n";
  return StageOutput{{{"synthesis.jsonl", s.jsonl}},
                     {{"inputs", nlohmann::json::array({StageInput(input), ExperimentInput(e)})},
                      {"provenance",
                       {{"template", stage.params["template"]},
                        {"template_sha256", t.sha256},
                        {"model", stage.params["model"]}}},
                      {"counts", s.counts}}};
}

absl::StatusOr<StageOutput> RunDataset(const Invocation& inv, SchedulerClient& client,
                                       const pipelines::Pipeline& pipeline,
                                       const pipelines::Stage& stage,
                                       const pipelines::StageStore& store) {
  const pipelines::Stage& input = *pipeline.Find(stage.from);
  PTXB_ASSIGN_OR_RETURN(nlohmann::json took, RanManifest(store, input));
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadStageFile(store, input, took, "synthesis.jsonl"));
  PTXB_ASSIGN_OR_RETURN(std::vector<pipelines::SynthesizedRow> rows,
                        pipelines::ReadSynthesisJsonl(text));
  const bool fixit = stage.params["shape"] == "fixit5";
  FullTrajectories read(client);
  std::vector<pipelines::RecordTexts> texts(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const pipelines::SynthesizedRow& r = rows[i];
    if (!r.synthesized) continue;
    if (fixit && !r.row.wrong) {
      return absl::FailedPreconditionError(absl::StrCat(
          "stage ", stage.name, ": a fixit5 record needs a wrong kernel and its fix; stage ",
          input.name, " explained kernels without one (use shape kernelgen3)"));
    }
    pipelines::RecordTexts& x = texts[i];
    const v1::Trajectory* source = nullptr;
    PTXB_ASSIGN_OR_RETURN(const v1::Turn* kernel, TurnOf(read, stage, r.row.kernel, &source));
    x.answer = kernel->response().text();
    x.system_prompt = source->system_prompt();
    x.task_prompt = source->task_prompt();
    if (fixit) {
      const v1::Trajectory* base = nullptr;
      PTXB_ASSIGN_OR_RETURN(const v1::Turn* wrong, TurnOf(read, stage, *r.row.wrong, &base));
      x.system_prompt = base->system_prompt();
      x.task_prompt = base->task_prompt();
      x.wrong_answer = wrong->response().text();
      x.wrong_feedback = wrong->feedback();
    }
  }
  const pipelines::Dataset d = pipelines::BuildDataset(stage, rows, texts);
  inv.err() << "  " << d.counts["records"].dump() << " " << stage.params["shape"].get<std::string>()
            << " records of " << rows.size() << " rows\n";
  return StageOutput{{{"sft.jsonl", d.jsonl}},
                     {{"inputs", nlohmann::json::array({StageInput(input)})},
                      {"lineage", StageLineage(pipeline, stage)},
                      {"counts", d.counts}}};
}

}  // namespace ptxbench::cli::stage_io
