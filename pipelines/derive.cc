// The derive stage's experiment (derive.h).

#include "pipelines/derive.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "pipelines/jsonl.h"

namespace ptxbench::pipelines {

DerivedExperiment BuildDerivedExperiment(const Pipeline& pipeline, const Stage& stage,
                                         const std::vector<DeriveSource>& sources) {
  DerivedExperiment out;
  out.name = absl::StrCat(pipeline.name, ".", stage.name, ".", stage.id.substr(3, 12));
  const nlohmann::json* agent = stage.params.contains("agent") ? &stage.params["agent"] : nullptr;
  nlohmann::json items = nlohmann::json::array();
  for (size_t i = 0; i < sources.size(); ++i) {
    const DeriveSource& s = sources[i];
    const std::string kernel = absl::StrCat("rows/", i, "/kernel.cu");
    const std::string log = absl::StrCat("rows/", i, "/error.log");
    out.files[kernel] = s.kernel;
    out.files[log] = s.log;
    nlohmann::json item = {{"num_trajectories", 1},
                           {"target_speedup", stage.params["target_speedup"]},
                           {"prompt_tag", stage.params["prompt_tag"]},
                           {"definition", s.row.definition},
                           {"error_kernel_path", kernel},
                           {"error_log_path", log}};
    if (agent == nullptr) item["num_turns"] = stage.params["num_turns"];
    items.push_back(std::move(item));
    absl::StrAppend(&out.items_jsonl,
                    nlohmann::json{{"sample_index", i},
                                   {"experiment_id", s.row.experiment_id},
                                   {"trajectory_id", s.row.trajectory_id},
                                   {"turn", s.row.turn},
                                   {"definition", s.row.definition},
                                   {"status", s.row.status},
                                   {"kernel_sha256", Sha256Hex(s.kernel)},
                                   {"log_sha256", Sha256Hex(s.log)}}
                        .dump(),
                    "\n");
  }
  if (agent == nullptr) {
    out.spec_json = items.dump(1);
    return out;
  }
  // Agent mode: a list spec's object form, each session starting from its
  // item's kernel and log unless the stage's agent object says otherwise.
  nlohmann::json settings = *agent;
  if (!settings.contains("starter")) settings["starter"] = "fixit";
  out.spec_json = nlohmann::json{{"mode", "agent"}, {"agent", settings}, {"items", items}}.dump(1);
  return out;
}

absl::StatusOr<std::vector<Row>> ReadSelectionJsonl(absl::string_view text) {
  return internal::ReadJsonl<Row>(text, "selection.jsonl", "a selected row",
                                  [](const nlohmann::json& j) {
                                    Row r;
                                    r.experiment_id = j.at("experiment_id").get<std::string>();
                                    r.trajectory_id = j.at("trajectory_id").get<std::string>();
                                    r.definition = j.at("definition").get<std::string>();
                                    r.prompt_tag = j.at("prompt_tag").get<std::string>();
                                    r.turn = j.at("turn").get<int>();
                                    r.status = j.at("status").get<std::string>();
                                    r.speedup = j.at("speedup").get<double>();
                                    r.kernel_sha256 = j.at("kernel_sha256").get<std::string>();
                                    r.hopper = j.at("hopper").get<bool>();
                                    r.hopper_from = j.value("hopper_from", "ptx");
                                    return r;
                                  });
}

}  // namespace ptxbench::pipelines
