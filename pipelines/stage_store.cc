// Stage folders (stage_store.h).

#include "pipelines/stage_store.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "results/exports/output_dir.h"

namespace ptxbench::pipelines {

constexpr char kManifestFile[] = "manifest.json";

std::string StageStore::Folder(const Stage& stage) const {
  return (std::filesystem::path(root_) / stage.id).string();
}

std::string StageStore::ManifestPath(const Stage& stage) const {
  return (std::filesystem::path(Folder(stage)) / kManifestFile).string();
}

std::string StageStore::OutputSha256(const nlohmann::json& manifest, const std::string& file) {
  for (const nlohmann::json& output : manifest.value("outputs", nlohmann::json::array())) {
    if (output.value("file", "") == file) return output.value("sha256", "");
  }
  return "";
}

std::optional<nlohmann::json> StageStore::Manifest(const Stage& stage) const {
  absl::StatusOr<std::string> text = ReadFile(ManifestPath(stage));
  if (!text.ok()) return std::nullopt;
  nlohmann::json manifest = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!manifest.is_object() || manifest.value("format", "") != kStageManifestFormat ||
      manifest.value("id", "") != stage.id) {
    return std::nullopt;
  }
  return manifest;
}

absl::StatusOr<nlohmann::json> StageStore::Write(const Pipeline& pipeline, const Stage& stage,
                                                 const std::map<std::string, std::string>& files,
                                                 nlohmann::json manifest) const {
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<exports::OutputDir> dir,
                        exports::OutputDir::Create(Folder(stage)));
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& [name, content] : files) {
    PTXB_RETURN_IF_ERROR(WriteFile(dir->File(name), content));
    nlohmann::json output = {{"file", name},
                             {"sha256", Sha256Hex(content)},
                             {"bytes", content.size()}};
    if (name.ends_with(".jsonl")) output["rows"] = std::count(content.begin(), content.end(), '\n');
    outputs.push_back(std::move(output));
  }
  manifest["format"] = kStageManifestFormat;
  manifest["pipeline"] = pipeline.name;
  manifest["stage"] = stage.name;
  manifest["kind"] = stage.kind;
  manifest["id"] = stage.id;
  manifest["params"] = stage.params;
  manifest["outputs"] = std::move(outputs);
  // Last: a folder with its manifest is a stage that ran to its end.
  PTXB_RETURN_IF_ERROR(WriteFile(dir->File(kManifestFile), manifest.dump(2) + "\n"));
  PTXB_RETURN_IF_ERROR(dir->Commit());
  return manifest;
}

}  // namespace ptxbench::pipelines
