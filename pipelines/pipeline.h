#ifndef PTXBENCH_PIPELINES_PIPELINE_H_
#define PTXBENCH_PIPELINES_PIPELINE_H_

// A training-data pipeline (docs/PIPELINES.md): a file listing ordered
// stages, each of a kind (select, derive, pairs, synthesize, dataset, model,
// evaluate) that takes what one earlier stage (or finished experiments)
// made and makes one thing of its own. This header reads such a file
// strictly and checks its wiring without running anything: an unknown kind
// or parameter, an input that names no earlier stage, an input of the wrong
// kind, a cycle, each is one error naming the stage. Each stage's id is the
// hash of its kind, parameters and inputs' ids, so a changed parameter gives
// new ids to that stage and those downstream of it only.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace ptxbench::pipelines {

// What a stage makes; what the next stage takes.
enum class Output { kSelection, kExperiment, kPairs, kSynthesis, kDataset, kModel, kEvaluation };
absl::string_view OutputName(Output o);

struct Stage {
  std::string name;  // unique in the file, [A-Za-z0-9._-]{1,64}
  std::string kind;  // select, derive, ...
  // The stage whose output it takes; empty for a select of finished
  // experiments, which `experiments` names instead.
  std::string from;
  std::vector<std::string> experiments;
  // The kind's parameters, defaults filled in (std::map-backed, so their
  // dump is canonical).
  nlohmann::json params;
  Output output = Output::kSelection;
  // "st_" + 20 hex digits of sha256 over kind, parameters and the inputs'
  // ids (an upstream stage's id, or "experiment:NAME"), and the sha256 of
  // the files it takes (ReadPipeline's hash_file).
  std::string id;
};

struct Pipeline {
  std::string name;
  std::vector<Stage> stages;  // in file order, which is a run order
  const Stage* Find(absl::string_view name) const;
};

// A path a pipeline file names: as it is when absolute, else relative to
// the pipeline file's folder.
std::string PipelinePath(const std::string& pipeline_file, const std::string& path);

// The sha256 of the file a stage parameter names (a path as written in the
// pipeline file), or why it cannot be read.
using FileHasher = std::function<absl::StatusOr<std::string>(const std::string& path)>;

// Reads `text` (from `origin`, for messages). INVALID_ARGUMENT with one
// message, "<origin>: $.stages[2].from: expected ..., found ...; why".
// With `hash_file`, the files stages take (an evaluate stage's spec) are
// part of their ids, so a spec edited in place gives that stage (and those
// after it) new ids; one that cannot be read is an error naming the stage.
absl::StatusOr<Pipeline> ReadPipeline(absl::string_view text, absl::string_view origin,
                                      const FileHasher& hash_file = nullptr);

}  // namespace ptxbench::pipelines

#endif  // PTXBENCH_PIPELINES_PIPELINE_H_
