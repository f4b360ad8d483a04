#include "scheduler/store/stage_manifest_store.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "common/lineage.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {

constexpr char kColumns[] =
    "stage_id, pipeline, stage, kind, sha256, recorded_ms, recorded_by, manifest";

v1::StageManifest ReadRow(const storage::Statement& s) {
  v1::StageManifest m;
  m.set_stage_id(s.ColumnText(0));
  m.set_pipeline(s.ColumnText(1));
  m.set_stage(s.ColumnText(2));
  m.set_kind(s.ColumnText(3));
  m.set_sha256(s.ColumnText(4));
  m.set_recorded_unix_ms(s.ColumnInt64(5));
  m.set_recorded_by(s.ColumnText(6));
  m.set_manifest_json(s.ColumnText(7));
  return m;
}

absl::Status NotAManifest(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("not a stage manifest (", kStageManifestFormat,
                                                 "): ", why));
}

// The manifest's record without its text, or why it is not one.
absl::StatusOr<v1::StageManifest> Describe(const std::string& text) {
  if (text.size() > StageManifestStore::kMaxBytes) {
    return NotAManifest(absl::StrCat(text.size(), " bytes, more than the ",
                                     StageManifestStore::kMaxBytes, " a manifest may have"));
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return NotAManifest("not a JSON object");
  if (j.value("format", "") != kStageManifestFormat) {
    return NotAManifest(absl::StrCat("\"format\" is ", j.contains("format") ? j["format"].dump()
                                                                           : "missing"));
  }
  v1::StageManifest m;
  for (auto [key, field] : {std::pair{"id", m.mutable_stage_id()},
                            {"pipeline", m.mutable_pipeline()},
                            {"stage", m.mutable_stage()},
                            {"kind", m.mutable_kind()}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) {
      return NotAManifest(absl::StrCat("\"", key, "\" is not a non-empty string"));
    }
    *field = it->get<std::string>();
  }
  if (!absl::StartsWith(m.stage_id(), "st_")) {
    return NotAManifest(absl::StrCat("\"id\" is '", m.stage_id(), "', not a stage id (st_...)"));
  }
  m.set_sha256(Sha256Hex(text));
  return m;
}

}  // namespace

absl::StatusOr<v1::StageManifest> StageManifestStore::Record(const std::string& manifest_json,
                                                             const std::string& recorded_by,
                                                             int64_t now_ms,
                                                             bool* already_recorded) {
  PTXB_ASSIGN_OR_RETURN(v1::StageManifest m, Describe(manifest_json));
  m.set_recorded_unix_ms(now_ms);
  m.set_recorded_by(recorded_by);
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached(absl::StrCat("INSERT INTO stage_manifests(", kColumns,
                               ") VALUES(?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING")));
  s->BindText(1, m.stage_id())
      .BindText(2, m.pipeline())
      .BindText(3, m.stage())
      .BindText(4, m.kind())
      .BindText(5, m.sha256())
      .BindInt64(6, now_ms)
      .BindText(7, recorded_by)
      .BindText(8, manifest_json);
  PTXB_RETURN_IF_ERROR(s->Run());
  *already_recorded = db_->Changes() == 0;
  if (*already_recorded) {
    // The first record stands: say when and by whom it was made.
    PTXB_ASSIGN_OR_RETURN(storage::Statement * first,
                          db_->Cached("SELECT recorded_ms, recorded_by FROM stage_manifests "
                                      "WHERE stage_id = ? AND sha256 = ?"));
    first->BindText(1, m.stage_id()).BindText(2, m.sha256());
    PTXB_ASSIGN_OR_RETURN(bool row, first->Step());
    if (row) {
      m.set_recorded_unix_ms(first->ColumnInt64(0));
      m.set_recorded_by(first->ColumnText(1));
    }
    first->Reset();
  }
  return m;
}

absl::StatusOr<std::vector<v1::StageManifest>> StageManifestStore::List(
    const std::string& pipeline, const std::string& stage_id, bool with_text) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT stage_id, pipeline, stage, kind, sha256, recorded_ms, recorded_by, "
                  // A listing leaves the texts where they are.
                  "CASE WHEN ?3 THEN manifest ELSE '' END FROM stage_manifests "
                  "WHERE (?1 = '' OR pipeline = ?1) AND (?2 = '' OR stage_id = ?2) "
                  "ORDER BY recorded_ms, stage_id, sha256"));
  s->BindText(1, pipeline).BindText(2, stage_id).BindBool(3, with_text);
  std::vector<v1::StageManifest> out;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out.push_back(ReadRow(*s));
  }
  return out;
}

}  // namespace ptxbench::scheduler
