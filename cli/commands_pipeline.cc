// Pipeline commands (docs/PIPELINES.md): `pipeline check FILE` reads a
// pipeline file and checks its wiring without running anything or calling
// the scheduler.

#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "common/text_format.h"
#include "nlohmann/json.hpp"
#include "pipelines/pipeline.h"

namespace ptxbench::cli {
namespace {

absl::Status RunCheck(const Invocation& inv) {
  const std::string& path = inv.args.positionals[0];
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  PTXB_ASSIGN_OR_RETURN(pipelines::Pipeline pipeline, pipelines::ReadPipeline(text, path));
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
        "its kind, parameters and inputs, which changes only downstream of a change."},
       RunCheck});
}

}  // namespace ptxbench::cli
