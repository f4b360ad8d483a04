#ifndef PTXBENCH_SCHEDULER_STORE_STAGE_MANIFEST_STORE_H_
#define PTXBENCH_SCHEDULER_STORE_STAGE_MANIFEST_STORE_H_

// The stage_manifests table: the manifests pipeline stages wrote
// (docs/PIPELINES.md, "Stage manifests in the database"), kept byte for byte
// so that a stage's record and its folder's manifest.json have one sha256.
// A stage is keyed by its id and its manifest's sha256: recording the same
// manifest again changes nothing, and a stage recomputed (its folder lost)
// with another manifest is kept beside the first, never over it.
//
// Threading: as Core (the writer thread).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ptxbench/v1/client.pb.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

class StageManifestStore {
 public:
  // A manifest larger than this is refused (they are a few KiB).
  static constexpr size_t kMaxBytes = 4 << 20;

  explicit StageManifestStore(storage::Database* db) : db_(db) {}

  // Records `manifest_json`. INVALID_ARGUMENT naming what is wrong when it
  // is not a stage manifest (not a JSON object, another format, no id,
  // pipeline, stage or kind, too large). `already_recorded` says whether
  // this very text was recorded before.
  absl::StatusOr<ptxbench::v1::StageManifest> Record(const std::string& manifest_json,
                                                     const std::string& recorded_by,
                                                     int64_t now_ms, bool* already_recorded);
  // Oldest first; `pipeline` and `stage_id` filter when not "".
  absl::StatusOr<std::vector<ptxbench::v1::StageManifest>> List(const std::string& pipeline,
                                                                const std::string& stage_id,
                                                                bool with_text);

 private:
  storage::Database* db_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_STAGE_MANIFEST_STORE_H_
