// The sft export: the record schema, what each filter keeps, and a manifest
// whose hashes match the files.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/file.h"
#include "common/hash.h"
#include "results/exports/export.h"
#include "results/exports/testing/scratch.h"
#include "results/exports/testing/trajectories.h"

namespace ptxbench::exports {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = nlohmann::ordered_json;
using ::testing::ElementsAre;
using testing::TurnKind;

class SftTest : public ::testing::Test {
 protected:
  SftTest() {
    trajectories_ = {
        // Correct at turns 1 (1.5x), 3 (3.0x) and 4 (3.0x, a tie).
        testing::Trajectory(0, v1::LIMITS_EXCEEDED,
                            {{TurnKind::kNoCode},
                             {TurnKind::kCorrect, 1.5},
                             {TurnKind::kIncorrect},
                             {TurnKind::kCorrect, 3.0},
                             {TurnKind::kCorrect, 3.0, /*simulated=*/true}}),
        testing::Trajectory(1, v1::FAILED, {{TurnKind::kCompileError}}),
        testing::Trajectory(2, v1::SUBMITTED, {{TurnKind::kCorrect, 0.5}}),
    };
  }

  // The records written with `filter`, after checking the manifest.
  std::vector<Json> Export(const std::string& filter) {
    Options options;
    options.sft_filter = *ParseSftFilter(filter);
    options.ptxbench_version = "0.1.0";
    options.now = absl::FromUnixSeconds(1767225600);
    const std::string out = scratch_ / filter;
    EXPECT_TRUE(testing::ExportAll(Format::kSft, out, options, testing::Experiment(),
                                   testing::Definitions(), trajectories_)
                    .ok());
    EXPECT_THAT(testing::FilesUnder(out), ElementsAre("sft.jsonl", "sft.manifest.json"));
    const std::string records = *ReadFile(out + "/sft.jsonl");
    manifest_ = Json::parse(*ReadFile(out + "/sft.manifest.json"));
    std::vector<Json> out_records;
    for (absl::string_view line : absl::StrSplit(records, '\n', absl::SkipEmpty())) {
      out_records.push_back(Json::parse(line));
    }
    // Every file but the manifest, with its hash and size.
    EXPECT_EQ(manifest_["files"].size(), 1u);
    EXPECT_EQ(manifest_["files"][0]["path"], "sft.jsonl");
    EXPECT_EQ(manifest_["files"][0]["sha256"], Sha256Hex(records));
    EXPECT_EQ(manifest_["files"][0]["bytes"], records.size());
    EXPECT_EQ(manifest_["counts"]["records"], out_records.size());
    return out_records;
  }

  std::vector<int> Turns(const std::vector<Json>& records) {
    std::vector<int> out;
    for (const Json& r : records) out.push_back(r["metadata"]["turn"].get<int>());
    return out;
  }

  testing::Scratch scratch_;
  std::vector<v1::Trajectory> trajectories_;
  Json manifest_;
};

TEST_F(SftTest, ARecordIsTheConversationUpToACorrectAnswer) {
  const std::vector<Json> records = Export("correct");
  ASSERT_EQ(records.size(), 4u);
  const Json& r = records[1];  // turn 3 of sample 0
  std::vector<std::string> keys;
  for (const auto& [key, value] : r.items()) keys.push_back(key);
  EXPECT_THAT(keys, ElementsAre("id", "messages", "metadata"));
  EXPECT_EQ(r["id"], "tr_test_0_t3");
  const v1::Trajectory& t = trajectories_[0];
  const Json& m = r["messages"];
  ASSERT_EQ(m.size(), 2u + 2 * 3 + 1);
  EXPECT_EQ(m[0]["role"], "system");
  EXPECT_EQ(m[0]["content"], t.system_prompt());
  EXPECT_EQ(m[1]["role"], "user");
  EXPECT_EQ(m[1]["content"], t.task_prompt());
  for (int turn = 0; turn < 3; ++turn) {
    EXPECT_EQ(m[2 + 2 * turn]["role"], "assistant");
    EXPECT_EQ(m[2 + 2 * turn]["content"], t.turns(turn).response().text());
    EXPECT_EQ(m[3 + 2 * turn]["role"], "user");
    EXPECT_EQ(m[3 + 2 * turn]["content"], t.turns(turn).feedback());
  }
  EXPECT_EQ(m[8]["role"], "assistant");
  EXPECT_EQ(m[8]["content"], t.turns(3).response().text());
  // Loss on the final answer only.
  for (size_t i = 0; i < m.size(); ++i) {
    ASSERT_TRUE(m[i]["step_loss_mask"].is_number_integer());
    EXPECT_EQ(m[i]["step_loss_mask"], i + 1 == m.size() ? 1 : 0) << i;
  }
  const Json& meta = r["metadata"];
  EXPECT_EQ(meta["experiment"], "export-test");
  EXPECT_EQ(meta["experiment_id"], "exp_00112233aabbccdd");
  EXPECT_EQ(meta["trajectory_id"], "tr_test_0");
  EXPECT_EQ(meta["model"], "m/one");
  EXPECT_EQ(meta["definition"], "gemm_export_test");
  EXPECT_EQ(meta["tag"], "ptxb-basic");
  EXPECT_EQ(meta["turn"], 3);
  EXPECT_DOUBLE_EQ(meta["speedup"].get<double>(), 3.0 * std::sqrt(2.0));
  EXPECT_EQ(meta["kernel_sha256"], t.turns(3).kernel_sha256());
  EXPECT_EQ(meta["system_prompt_sha256"], Sha256Hex(t.system_prompt()));
  EXPECT_EQ(meta["task_prompt_sha256"], Sha256Hex(t.task_prompt()));
  EXPECT_EQ(meta["assistant_sha256"], Sha256Hex(t.turns(3).response().text()));
  EXPECT_EQ(meta["simulated"], false);
  EXPECT_EQ(records[2]["metadata"]["simulated"], true);  // turn 4's evaluation was simulated
}

TEST_F(SftTest, FiltersChooseTheTurns) {
  EXPECT_THAT(Turns(Export("correct")), ElementsAre(1, 3, 4, 0));
  // The fastest per trajectory, the earliest of a tie.
  EXPECT_THAT(Turns(Export("best")), ElementsAre(3, 0));
  // Speedups are geometric means over the workloads: s * sqrt(2) here.
  EXPECT_THAT(Turns(Export("min-speedup=2")), ElementsAre(1, 3, 4));
  EXPECT_THAT(Turns(Export("min-speedup=4.3")), ElementsAre());
}

TEST_F(SftTest, TheManifestSaysWhereTheRecordsCameFrom) {
  Export("best");
  EXPECT_EQ(manifest_["ptxbench_version"], "0.1.0");
  EXPECT_EQ(manifest_["created"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(manifest_["filter"], "best");
  ASSERT_EQ(manifest_["sources"].size(), 1u);
  const Json& source = manifest_["sources"][0];
  EXPECT_EQ(source["experiment_id"], "exp_00112233aabbccdd");
  EXPECT_EQ(source["name"], "export-test");
  EXPECT_EQ(source["spec_sha256"], Sha256Hex(testing::Experiment().spec_json()));
  EXPECT_EQ(manifest_["counts"]["trajectories"], 3);
  EXPECT_EQ(manifest_["counts"]["turns"], 7);
  EXPECT_EQ(manifest_["counts"]["records"], 2);
  EXPECT_EQ(manifest_["simulated"], false);  // the best turns were measured
}

}  // namespace
}  // namespace ptxbench::exports
