// Stage folders (stage_store.h): a stage's files and manifest appear whole,
// the manifest's hashes and rows are those of the files, and a stage with
// its manifest is found done.

#include "pipelines/stage_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "common/hash.h"

namespace ptxbench::pipelines {
namespace {

namespace fs = std::filesystem;

TEST(StageStoreTest, AStageIsWrittenWholeWithItsManifestAndFoundDone) {
  const fs::path root = fs::temp_directory_path() / absl::StrCat("ptxb_stages_", getpid());
  fs::remove_all(root);
  absl::StatusOr<Pipeline> pipeline = ReadPipeline(R"({"name": "p", "stages": [
      {"name": "failed", "kind": "select", "experiments": ["base"], "rows": "failed"}]})",
                                                   "p.json");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  const Stage& stage = pipeline->stages[0];
  StageStore store(root.string());
  EXPECT_FALSE(store.Manifest(stage).has_value()) << "nothing ran yet";

  const std::string rows = "{\"turn\": 0}\n{\"turn\": 1}\n";
  absl::StatusOr<nlohmann::json> written =
      store.Write(*pipeline, stage, {{"selection.jsonl", rows}},
                  {{"inputs", {{{"kind", "experiment"}, {"id", "exp_1"}}}}});
  ASSERT_TRUE(written.ok()) << written.status();
  std::optional<nlohmann::json> found = store.Manifest(stage);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, *written);
  EXPECT_EQ((*found)["format"], kStageManifestFormat);
  EXPECT_EQ((*found)["id"], stage.id);
  EXPECT_EQ((*found)["stage"], "failed");
  EXPECT_EQ((*found)["params"]["rows"], "failed");
  EXPECT_EQ((*found)["inputs"][0]["id"], "exp_1");
  const nlohmann::json& output = (*found)["outputs"][0];
  EXPECT_EQ(output["file"], "selection.jsonl");
  EXPECT_EQ(output["rows"], 2);
  EXPECT_EQ(output["bytes"], rows.size());
  absl::StatusOr<std::string> on_disk = ReadFile(store.Folder(stage) + "/selection.jsonl");
  ASSERT_TRUE(on_disk.ok());
  EXPECT_EQ(output["sha256"], Sha256Hex(*on_disk)) << "the manifest hashes what is on disk";
  // Nothing half-written beside it.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(root)) entries += e.path().filename() == stage.id ? 1 : 100;
  EXPECT_EQ(entries, 1);
  // Written again: refused, the stage is there.
  EXPECT_FALSE(store.Write(*pipeline, stage, {{"selection.jsonl", rows}}, {}).ok());
  // A manifest of another stage in its folder is not this stage's.
  ASSERT_TRUE(WriteFile(store.Folder(stage) + "/manifest.json",
                        R"({"format": "ptxbench.stage.v1", "id": "st_other"})").ok());
  EXPECT_FALSE(store.Manifest(stage).has_value());
  fs::remove_all(root);
}

}  // namespace
}  // namespace ptxbench::pipelines
