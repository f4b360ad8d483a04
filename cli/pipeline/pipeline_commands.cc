// Pipeline commands (docs/PIPELINES.md): `pipeline check FILE` reads a
// pipeline file and checks its wiring and input experiments without running
// anything; `pipeline run FILE [STAGE]` runs its stages into stage folders; `pipeline status
// FILE` says where each stands; `pipeline manifests [NAME]` lists (and
// exports) the stage manifests the scheduler keeps.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/client/client.h"
#include "cli/commands/commands.h"
#include "cli/pipeline/stages.h"
#include "cli/terminal/format.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "common/text_format.h"
#include "nlohmann/json.hpp"
#include "pipelines/pipeline.h"
#include "pipelines/stage_store.h"
#include "results/exports/output_dir.h"

namespace ptxbench::cli {
namespace {

// The finished experiments the pipeline's select stages take, asked of the
// scheduler: one unknown or still running is an error naming the stage. With
// no scheduler to ask, a note says they were not checked.
absl::Status CheckInputExperiments(const Invocation& inv, const pipelines::Pipeline& pipeline) {
  std::optional<SchedulerClient> client;
  for (const pipelines::Stage& s : pipeline.stages) {
    for (const std::string& name : s.experiments) {
      if (!client) client.emplace(Connect(inv));
      absl::StatusOr<v1::GetExperimentResponse> e = client->GetExperiment(name);
      if (absl::IsUnavailable(e.status()) || absl::IsDeadlineExceeded(e.status())) {
        inv.err() << "note: the input experiments were not checked: " << e.status().message()
                  << "\n";
        return absl::OkStatus();
      }
      if (absl::IsNotFound(e.status())) {
        return absl::NotFoundError(
            absl::StrCat("stage '", s.name, "': no experiment ", name, " in the scheduler"));
      }
      PTXB_RETURN_IF_ERROR(e.status());
      const v1::ExperimentProgress& p = e->progress();
      if (p.terminal() < p.total()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "stage '", s.name, "': experiment ", name, " is still running (", p.terminal(),
            " of ", p.total(), " trajectories finished); a select takes finished experiments"));
      }
    }
  }
  return absl::OkStatus();
}

// The pipeline file, the files its stages take hashed into their ids (a
// path relative to the pipeline file's folder).
absl::StatusOr<pipelines::Pipeline> ReadPipelineFile(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return pipelines::ReadPipeline(
      text, path, [&path](const std::string& file) -> absl::StatusOr<std::string> {
        PTXB_ASSIGN_OR_RETURN(std::string content, ReadFile(pipelines::PipelinePath(path, file)));
        return Sha256Hex(content);
      });
}

absl::Status RunCheck(const Invocation& inv) {
  const std::string& path = inv.args.positionals[0];
  PTXB_ASSIGN_OR_RETURN(pipelines::Pipeline pipeline, ReadPipelineFile(path));
  PTXB_RETURN_IF_ERROR(CheckInputExperiments(inv, pipeline));
  if (inv.global.json) {
    nlohmann::json stages = nlohmann::json::array();
    for (const pipelines::Stage& s : pipeline.stages) {
      stages.push_back({{"name", s.name},
                        {"kind", s.kind},
                        {"from", s.from},
                        {"experiments", s.experiments},
                        {"makes", std::string(pipelines::OutputName(s.output))},
                        {"params", s.params},
                        {"id", s.id}});
    }
    inv.out() << nlohmann::json({{"pipeline", pipeline.name}, {"stages", stages}}).dump(2)
              << "\n";
    return absl::OkStatus();
  }
  Table table({"STAGE", "KIND", "TAKES", "MAKES", "ID"});
  for (const pipelines::Stage& s : pipeline.stages) {
    std::string takes = s.from;
    for (const std::string& e : s.experiments) {
      takes += (takes.empty() ? "experiment " : ", ") + e;
    }
    table.AddRow({s.name, s.kind, takes, std::string(pipelines::OutputName(s.output)), s.id});
  }
  inv.out() << "pipeline " << pipeline.name << " (" << path << "): " << pipeline.stages.size()
            << " stages, wired correctly\n"
            << table.Render();
  return absl::OkStatus();
}

// --dir, else pipelines/ under the data directory.
std::string StageRoot(const Invocation& inv) {
  return inv.args.Has("dir") ? inv.args.Get("dir")
                             : (std::filesystem::path(inv.global.data_dir) / "pipelines").string();
}



// Records the manifest of `stage` (done) in the scheduler's database, as
// its folder has it; true when it was not recorded before.
absl::StatusOr<bool> RecordManifest(SchedulerClient& client, const pipelines::StageStore& store,
                                    const pipelines::Stage& stage) {
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile(store.ManifestPath(stage)));
  absl::StatusOr<v1::RecordStageManifestResponse> r = client.RecordStageManifest(text);
  if (!r.ok()) {
    return absl::Status(r.status().code(),
                        absl::StrCat("stage '", stage.name, "': recording its manifest (",
                                     store.ManifestPath(stage), "): ", r.status().message()));
  }
  return !r->already_recorded();
}

absl::Status RunRun(const Invocation& inv) {
  const std::string& path = inv.args.positionals[0];
  PTXB_ASSIGN_OR_RETURN(pipelines::Pipeline pipeline, ReadPipelineFile(path));
  std::vector<const pipelines::Stage*> stages;
  if (inv.args.positionals.size() > 1) {
    const pipelines::Stage* only = pipeline.Find(inv.args.positionals[1]);
    if (only == nullptr) {
      return absl::NotFoundError(absl::StrCat("pipeline ", pipeline.name, " has no stage '",
                                              inv.args.positionals[1], "'"));
    }
    stages.push_back(only);
  } else {
    for (const pipelines::Stage& s : pipeline.stages) stages.push_back(&s);
  }
  const pipelines::StageStore store(StageRoot(inv));
  SchedulerClient client = Connect(inv);
  for (const pipelines::Stage* s : stages) {
    const std::string label = absl::StrCat("stage ", s->name, " (", s->kind, ", ", s->id, ")");
    if (std::optional<nlohmann::json> done = store.Manifest(*s)) {
      // Recorded again in case the run that made it stopped before it could
      // (or this is another scheduler): a manifest recorded is not changed.
      PTXB_ASSIGN_OR_RETURN(bool recorded, RecordManifest(client, store, *s));
      inv.out() << label << ": up to date, nothing recomputed"
                << (recorded ? " (its manifest recorded in the scheduler now)" : "") << ": "
                << store.Folder(*s) << "\n";
      continue;
    }
    inv.err() << label << ": running\n";
    PTXB_ASSIGN_OR_RETURN(nlohmann::json manifest, RunStage(inv, client, pipeline, *s, store));
    PTXB_RETURN_IF_ERROR(RecordManifest(client, store, *s).status());
    inv.out() << label << ": " << StageSummary(*s, manifest) << ": " << store.Folder(*s) << "\n";
  }
  return absl::OkStatus();
}

// Each stage's state from its folder: done (with what it made and when),
// or not run. Reads no scheduler.
absl::Status RunStatus(const Invocation& inv) {
  const std::string& path = inv.args.positionals[0];
  PTXB_ASSIGN_OR_RETURN(pipelines::Pipeline pipeline, ReadPipelineFile(path));
  const pipelines::StageStore store(StageRoot(inv));
  nlohmann::json stages = nlohmann::json::array();
  Table table({"STAGE", "KIND", "STATE", "FINISHED", "WHAT IT MADE"});
  for (const pipelines::Stage& s : pipeline.stages) {
    std::optional<nlohmann::json> manifest = store.Manifest(s);
    const std::string state = manifest ? "done" : "not run";
    const int64_t finished = manifest ? manifest->value("finished_unix_ms", int64_t{0}) : 0;
    const std::string made = manifest ? StageSummary(s, *manifest) : "";
    stages.push_back({{"name", s.name},
                      {"kind", s.kind},
                      {"id", s.id},
                      {"state", state},
                      {"folder", store.Folder(s)},
                      {"manifest", manifest ? *manifest : nlohmann::json()}});
    table.AddRow({s.name, s.kind, state, finished > 0 ? FormatUnixMs(finished) : "-",
                  made.empty() ? "-" : made});
  }
  if (inv.global.json) {
    inv.out() << nlohmann::json({{"pipeline", pipeline.name}, {"stages", stages}}).dump(2)
              << "\n";
    return absl::OkStatus();
  }
  inv.out() << "pipeline " << pipeline.name << " (" << path << "), stage folders under "
            << StageRoot(inv) << "\n"
            << table.Render();
  return absl::OkStatus();
}

// The stage manifests the scheduler keeps: a table, JSON, or (--out DIR)
// each as a file byte for byte, with index.jsonl naming them.
absl::Status RunManifests(const Invocation& inv) {
  v1::ListStageManifestsRequest request;
  if (!inv.args.positionals.empty()) request.set_pipeline(inv.args.positionals[0]);
  // A table needs no manifest's text.
  request.set_without_text(!inv.args.Has("out") && !inv.global.json);
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::ListStageManifestsResponse list, client.ListStageManifests(request));
  auto file_of = [](const v1::StageManifest& m) {
    return absl::StrCat(m.stage_id(), "-", m.sha256().substr(0, 12), ".manifest.json");
  };
  auto record = [&](const v1::StageManifest& m) {
    return nlohmann::json{{"pipeline", m.pipeline()},     {"stage", m.stage()},
                          {"kind", m.kind()},             {"stage_id", m.stage_id()},
                          {"sha256", m.sha256()},         {"recorded_unix_ms", m.recorded_unix_ms()},
                          {"recorded_by", m.recorded_by()}, {"file", file_of(m)}};
  };
  if (inv.args.Has("out")) {
    PTXB_ASSIGN_OR_RETURN(std::unique_ptr<exports::OutputDir> dir,
                          exports::OutputDir::Create(inv.args.Get("out")));
    std::string index;
    for (const v1::StageManifest& m : list.manifests()) {
      PTXB_RETURN_IF_ERROR(WriteFile(dir->File(file_of(m)), m.manifest_json()));
      absl::StrAppend(&index, record(m).dump(), "\n");
    }
    PTXB_RETURN_IF_ERROR(WriteFile(dir->File("index.jsonl"), index));
    PTXB_RETURN_IF_ERROR(dir->Commit());
    inv.err() << "wrote " << list.manifests_size() << " stage manifests to " << dir->final_path()
              << "\n";
    return absl::OkStatus();
  }
  if (inv.global.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const v1::StageManifest& m : list.manifests()) {
      nlohmann::json r = record(m);
      r.erase("file");
      r["manifest"] = nlohmann::json::parse(m.manifest_json(), nullptr, false);
      out.push_back(std::move(r));
    }
    inv.out() << nlohmann::json({{"manifests", out}}).dump(2) << "\n";
    return absl::OkStatus();
  }
  Table table({"PIPELINE", "STAGE", "KIND", "STAGE ID", "SHA256", "RECORDED", "BY"});
  for (const v1::StageManifest& m : list.manifests()) {
    table.AddRow({m.pipeline(), m.stage(), m.kind(), m.stage_id(), m.sha256().substr(0, 12),
                  FormatUnixMs(m.recorded_unix_ms()), m.recorded_by()});
  }
  inv.out() << list.manifests_size() << " stage manifests recorded\n" << table.Render();
  return absl::OkStatus();
}

}  // namespace

void AddPipelineCommands(std::vector<Command>* commands) {
  commands->push_back(
      {{"pipeline check",
        "PIPELINE.json",
        1,
        1,
        {},
        "read a pipeline file and check its stages and their wiring; runs nothing",
        "Each stage's kind, parameters and input are checked (an unknown kind or\n"
        "parameter, an input that names no earlier stage or makes the wrong thing, a\n"
        "cycle: one error naming the stage), and each stage's id is printed: the hash of\n"
        "its kind, parameters and inputs, which changes only downstream of a change. The\n"
        "experiments select stages take are looked up in the scheduler: one unknown or\n"
        "still running is an error naming the stage (with no scheduler, a note says so)."},
       RunCheck});
  commands->push_back(
      {{"pipeline run",
        "PIPELINE.json [STAGE]",
        1,
        2,
        {{"dir", true, false, "DIR", "where stage folders go (default DATA_DIR/pipelines)"},
         {"wait", false, false, "",
          "wait for the experiments stages take to finish, showing their progress"}},
        "run a pipeline's stages (or one) into stage folders; a stage done is not run again",
        "Each stage writes DIR/<stage id>/: its files and manifest.json (inputs, counts,\n"
        "each file's sha256 and rows), whole or not at all. A stage whose folder has its\n"
        "manifest is up to date and is not recomputed. A stage that takes an experiment\n"
        "still running stops there (run it again later), or waits for it with --wait."},
       RunRun});
  commands->push_back(
      {{"pipeline status",
        "PIPELINE.json",
        1,
        1,
        {{"dir", true, false, "DIR", "where stage folders are (default DATA_DIR/pipelines)"}},
        "where each stage of a pipeline stands: done (what it made, when) or not run",
        ""},
       RunStatus});
  commands->push_back(
      {{"pipeline manifests",
        "[PIPELINE_NAME]",
        0,
        1,
        {{"out", true, false, "DIR",
          "write each manifest, byte for byte, into a new folder with index.jsonl"}},
        "the stage manifests the scheduler keeps (every pipeline's, or one's)",
        "`pipeline run` records each stage's manifest in the scheduler's database as its\n"
        "folder has it (same sha256). A stage recomputed with another manifest keeps\n"
        "both. --output json prints them with their records."},
       RunManifests});
}

}  // namespace ptxbench::cli
