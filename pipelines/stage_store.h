#ifndef PTXBENCH_PIPELINES_STAGE_STORE_H_
#define PTXBENCH_PIPELINES_STAGE_STORE_H_

// Where a pipeline's stages keep what they made (docs/PIPELINES.md, "Stage
// folders"): <root>/<stage id>/, its files and its stage manifest
// (manifest.json, format "ptxbench.stage.v1"), written whole or not at all:
// a stage that stopped part-way leaves nothing under its id, and one whose
// manifest is there is done, so running the pipeline again recomputes
// nothing. The manifest names each file with its sha256, size and rows.

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/lineage.h"
#include "nlohmann/json.hpp"
#include "pipelines/pipeline.h"

namespace ptxbench::pipelines {

class StageStore {
 public:
  explicit StageStore(std::string root) : root_(std::move(root)) {}

  // The folder of `stage`'s results.
  std::string Folder(const Stage& stage) const;
  // Where its manifest is, once it ran to its end.
  std::string ManifestPath(const Stage& stage) const;
  // The manifest of a stage that ran to its end; nullopt when none did.
  std::optional<nlohmann::json> Manifest(const Stage& stage) const;
  // The sha256 a manifest names for its output `file`; "" when none.
  static std::string OutputSha256(const nlohmann::json& manifest, const std::string& file);
  // Writes `files` (name -> content) and the manifest: `manifest` as the
  // stage made it (inputs, counts, times), with the format, the pipeline
  // and stage, their ids and parameters, and each file's sha256, bytes and
  // rows (lines of a .jsonl) added. Returns the manifest written.
  absl::StatusOr<nlohmann::json> Write(const Pipeline& pipeline, const Stage& stage,
                                       const std::map<std::string, std::string>& files,
                                       nlohmann::json manifest) const;

 private:
  std::string root_;
};

}  // namespace ptxbench::pipelines

#endif  // PTXBENCH_PIPELINES_STAGE_STORE_H_
