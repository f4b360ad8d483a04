#ifndef PTXBENCH_COMMON_LINEAGE_H_
#define PTXBENCH_COMMON_LINEAGE_H_

// How an experiment made by a pipeline stage says so in one line
// (docs/PIPELINES.md, "Lineage"), for `ptxbench status EXP` and reports. The
// lineage is the JSON object the stage submitted with the experiment:
//   {"pipeline", "stage", "kind", "stage_id", ["role"],
//    "from": [{"stage", "kind", "stage_id"}, ...], "experiments": [NAME, ...]}
// ("from": the stages it was made from, nearest first; "experiments": the
// finished experiments the first of them took).

#include <string>

#include "absl/strings/string_view.h"

namespace ptxbench {

// The format of a stage's manifest (docs/FORMATS.md, "Stage manifests"):
// written in the stage's folder and recorded in the scheduler's database.
inline constexpr char kStageManifestFormat[] = "ptxbench.stage.v1";

// "stage repairs (derive, st_...) of pipeline fixit, from failed (select) <-
// experiment base"; "" for "" or what is not such an object.
std::string LineageText(absl::string_view lineage_json);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_LINEAGE_H_
