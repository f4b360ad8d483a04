// The bundled pipelines (examples/pipelines/fixit.json, kernelgen.json) run
// end to end on a machine without a GPU: scripted models behind a real
// gateway, a real worker evaluating compile-only. Every manifest's hashes
// and counts are checked against its files and the database; a second run
// recomputes nothing; a changed parameter runs exactly the stages
// downstream of it again.
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "gtest/gtest.h"
#include "tests/cluster.h"

namespace ptxbench::testing {
namespace {

using Json = nlohmann::json;

// Each stage's id and kind, from `pipeline check`.
std::vector<Json> Stages(const Cluster& c, const std::string& file) {
  CommandResult checked = c.Cli({"pipeline", "check", file, "--output", "json"});
  EXPECT_EQ(checked.exit_code, 0) << checked.out;
  if (checked.exit_code != 0) return {};
  const Json stages = Json::parse(checked.out)["stages"];
  return std::vector<Json>(stages.begin(), stages.end());
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

// A stage's manifest, each output file checked against it: its sha256, bytes
// and lines.
Json CheckedManifest(const std::string& folder) {
  absl::StatusOr<std::string> text = ReadFile(folder + "/manifest.json");
  EXPECT_TRUE(text.ok()) << folder;
  if (!text.ok()) return nullptr;
  const Json manifest = Json::parse(*text);
  for (const Json& output : manifest["outputs"]) {
    const std::string file = output["file"];
    absl::StatusOr<std::string> content = ReadFile(folder + "/" + file);
    EXPECT_TRUE(content.ok()) << folder << "/" << file;
    if (!content.ok()) continue;
    EXPECT_EQ(output["sha256"], Sha256Hex(*content)) << file;
    EXPECT_EQ(output["bytes"], content->size()) << file;
    if (output.contains("rows")) EXPECT_EQ(output["rows"], Count(*content, "\n")) << file;
  }
  return manifest;
}

// The number of turns of experiment `name` with evaluation status `status`.
int64_t TurnsOf(const Cluster& c, const std::string& name, int status) {
  return c.QueryInt(absl::StrCat(
      "SELECT count(*) FROM turns WHERE eval_status = ", status,
      " AND trajectory IN (SELECT j.rowid FROM trajectories j JOIN experiments e ON "
      "e.rowid = j.experiment WHERE e.name = '", name, "')"));
}

constexpr int kCompileError = 6, kCompiled = 10;

TEST(PipelineExamplesTest, FixitAndKernelGenRunEndToEndWithoutAGpu) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) {
    GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc: compile-only evaluation "
                    "cannot run here";
  }
  const std::string examples = DataDir() + "/examples/pipelines";
  Cluster c("e2e_pipeline_examples");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.AddRealWorker({"--slots", "2"});
  c.AddRealGateway({"--models", examples + "/models.json"});
  for (const char* spec : {"base.json", "strong.json"}) {
    const std::string id =
        c.Submit(absl::StrCat(examples, "/", spec), {"--eval", "compile-only"});
    ASSERT_FALSE(id.empty()) << c.SchedulerLogTail();
    ASSERT_TRUE(c.WaitFinished(id, 240).is_object());
  }
  const std::string dir = c.dir() + "/stages";
  const std::string fixit = examples + "/fixit.json", kernelgen = examples + "/kernelgen.json";
  std::map<std::string, std::vector<Json>> stages = {{fixit, Stages(c, fixit)},
                                                     {kernelgen, Stages(c, kernelgen)}};
  ASSERT_EQ(stages[fixit].size(), 7u);
  ASSERT_EQ(stages[kernelgen].size(), 5u);
  auto folder = [&](const std::string& file, size_t i) {
    return dir + "/" + stages[file][i]["id"].get<std::string>();
  };
  // Up to the model: each stage on its own, waiting for its experiments.
  std::vector<std::string> models = {examples + "/models.json"};
  for (const std::string& file : {fixit, kernelgen}) {
    for (const Json& s : stages[file]) {
      if (s["kind"] == "evaluate") break;
      CommandResult run = c.Cli({"pipeline", "run", file, s["name"], "--dir", dir, "--wait"},
                                /*merge_stderr=*/true);
      ASSERT_EQ(run.exit_code, 0) << run.out << c.SchedulerLogTail();
    }
    models.push_back(folder(file, stages[file].size() - 2) + "/models.json");
  }
  // Until a gateway serves the trained model, its evaluation says so.
  CommandResult unserved = c.Cli({"pipeline", "run", fixit, "evaluation", "--dir", dir, "--wait"},
                                 /*merge_stderr=*/true);
  EXPECT_EQ(unserved.exit_code, 1);
  EXPECT_NE(unserved.out.find("no active gateway serves model fixit-lora; start a gateway with "
                              "--models " + models[1]),
            std::string::npos)
      << unserved.out;
  // The trained models, registered by their stages: a gateway serves them.
  c.AddRealGateway({"--models", absl::StrJoin(models, ",")});
  for (int i = 0; i < 300 && c.Cli({"workers", "--output", "json"}).out.find("kernelgen-sft") ==
                                 std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const std::string& file : {fixit, kernelgen}) {
    CommandResult run = c.Cli({"pipeline", "run", file, "--dir", dir, "--wait"},
                              /*merge_stderr=*/true);
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_EQ(Count(run.out, "up to date, nothing recomputed"), stages[file].size() - 1)
        << run.out;
  }

  // Fixit: the base's compile errors (its turn 1 compiles: compile-only
  // judges no failure there), each repaired, explained and made a record.
  const int64_t failed = TurnsOf(c, "pipeline-base", kCompileError);
  ASSERT_GT(failed, 0);
  const Json selected = CheckedManifest(folder(fixit, 0));
  EXPECT_EQ(selected["counts"]["kept"], failed);
  const Json derived = CheckedManifest(folder(fixit, 1));
  EXPECT_EQ(derived["experiment"]["trajectories"], failed);
  const std::string derived_name = derived["experiment"]["name"];
  EXPECT_EQ(c.QueryInt(absl::StrCat("SELECT eval_mode FROM experiments WHERE name = '",
                                    derived_name, "'")),
            2)
      << "evaluated as its source: compile-only";
  const Json pairs = CheckedManifest(folder(fixit, 2));
  EXPECT_EQ(pairs["counts"]["repaired"], failed) << "the repair model's kernel compiles";
  const Json synthesis = CheckedManifest(folder(fixit, 3));
  EXPECT_EQ(synthesis["counts"]["synthesized"], failed);
  EXPECT_EQ(synthesis["provenance"]["model"], "pipeline-reasoner");
  const Json records = CheckedManifest(folder(fixit, 4));
  EXPECT_EQ(records["counts"]["records"], failed);
  absl::StatusOr<std::string> sft = ReadFile(folder(fixit, 4) + "/sft.jsonl");
  ASSERT_TRUE(sft.ok());
  const Json record = Json::parse(sft->substr(0, sft->find('\n')));
  ASSERT_EQ(record["messages"].size(), 5u);
  EXPECT_NE(record["messages"][2]["content"].get<std::string>().find("__float2bf16"),
            std::string::npos)
      << "the wrong answer";
  EXPECT_NE(record["messages"][3]["content"].get<std::string>().find("__float2bf16"),
            std::string::npos)
      << "the compiler's words";
  EXPECT_NE(record["messages"][4]["content"].get<std::string>().find("<think>\nThe feedback"),
            std::string::npos);
  const Json model = CheckedManifest(folder(fixit, 5));
  EXPECT_EQ(model["lineage"]["dataset"]["sft_jsonl_sha256"], Sha256Hex(*sft));
  const Json evaluation = CheckedManifest(folder(fixit, 6));
  const std::string base_id = evaluation["experiments"]["base"];
  const std::string tuned_id = evaluation["experiments"]["tuned"];
  EXPECT_EQ(evaluation["headline"]["base"]["trajectories"], 4);
  EXPECT_EQ(evaluation["headline"]["tuned"]["trajectories"], 4);
  EXPECT_EQ(c.QueryInt(absl::StrCat(
                "SELECT count(*) FROM turns WHERE eval_status = ", kCompileError,
                " AND trajectory IN (SELECT j.rowid FROM trajectories j JOIN experiments e ON "
                "e.rowid = j.experiment WHERE e.id = '", tuned_id, "')")),
            0)
      << "the tuned stand-in's kernels compile";
  CommandResult report = c.Cli({"report", base_id, tuned_id});
  EXPECT_EQ(report.exit_code, 0) << report.out;
  EXPECT_NE(report.out.find("made by stage evaluation (evaluate, " +
                            stages[fixit][6]["id"].get<std::string>() +
                            ") of pipeline fixit, the tuned, from tuned (model) <- records "
                            "(dataset)"),
            std::string::npos)
      << report.out;

  // KernelGen: the strong model's compiled kernels, explained, three messages.
  const Json correct = CheckedManifest(folder(kernelgen, 0));
  EXPECT_EQ(correct["counts"]["kept"], TurnsOf(c, "pipeline-strong", kCompiled));
  const Json kg_records = CheckedManifest(folder(kernelgen, 2));
  EXPECT_EQ(kg_records["counts"]["records"], correct["counts"]["kept"]);
  absl::StatusOr<std::string> kg_sft = ReadFile(folder(kernelgen, 2) + "/sft.jsonl");
  ASSERT_TRUE(kg_sft.ok());
  EXPECT_EQ(Json::parse(kg_sft->substr(0, kg_sft->find('\n')))["messages"].size(), 3u);
  CheckedManifest(folder(kernelgen, 4));

  // Again: nothing recomputed, nothing submitted.
  const int64_t experiments = c.QueryInt("SELECT count(*) FROM experiments");
  for (const std::string& file : {fixit, kernelgen}) {
    CommandResult again = c.Cli({"pipeline", "run", file, "--dir", dir});
    EXPECT_EQ(again.exit_code, 0) << again.out;
    EXPECT_EQ(Count(again.out, "up to date, nothing recomputed"), stages[file].size());
    EXPECT_EQ(Count(again.out, "recorded in the scheduler now"), 0u) << again.out;
  }
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM experiments"), experiments);

  // Every stage's manifest is in the scheduler's database as its folder has
  // it, and `pipeline manifests --out` exports each byte for byte.
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM stage_manifests"),
            static_cast<int64_t>(stages[fixit].size() + stages[kernelgen].size()));
  const std::string exported = dir + "/../manifests-export";
  CommandResult manifests = c.Cli({"pipeline", "manifests", "fixit", "--out", exported});
  ASSERT_EQ(manifests.exit_code, 0) << manifests.out;
  absl::StatusOr<std::string> index = ReadFile(exported + "/index.jsonl");
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(Count(*index, "\n"), stages[fixit].size());
  for (size_t i = 0; i < stages[fixit].size(); ++i) {
    absl::StatusOr<std::string> in_folder = ReadFile(folder(fixit, i) + "/manifest.json");
    ASSERT_TRUE(in_folder.ok());
    const std::string sha = Sha256Hex(*in_folder);
    EXPECT_EQ(c.QueryInt(absl::StrCat("SELECT count(*) FROM stage_manifests WHERE stage_id = '",
                                      stages[fixit][i]["id"].get<std::string>(),
                                      "' AND sha256 = '", sha, "'")),
              1)
        << "stage " << i;
    absl::StatusOr<std::string> out = ReadFile(absl::StrCat(
        exported, "/", stages[fixit][i]["id"].get<std::string>(), "-", sha.substr(0, 12),
        ".manifest.json"));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(*out, *in_folder);
  }

  // A changed parameter (the dataset's max_chars) gives new ids to that stage
  // and the two after it only, and only those run.
  absl::StatusOr<std::string> text = ReadFile(fixit);
  ASSERT_TRUE(text.ok());
  Json changed = Json::parse(*text);
  changed["stages"][4]["max_chars"] = 1'000'000;
  const std::string changed_file = examples + "/.changed-" + std::to_string(getpid()) + ".json";
  ASSERT_TRUE(WriteFileAtomically(changed_file, changed.dump()).ok());
  const std::vector<Json> changed_stages = Stages(c, changed_file);
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(changed_stages[i]["id"] == stages[fixit][i]["id"], i < 4) << i;
  }
  CommandResult rerun = c.Cli({"pipeline", "run", changed_file, "--dir", dir, "--wait"},
                              /*merge_stderr=*/true);
  std::filesystem::remove(changed_file);
  EXPECT_EQ(rerun.exit_code, 0) << rerun.out;
  EXPECT_EQ(Count(rerun.out, "up to date, nothing recomputed"), 4u) << rerun.out;
  EXPECT_EQ(Count(rerun.out, ": running\n"), 3u) << rerun.out;
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM stage_manifests"),
            static_cast<int64_t>(stages[fixit].size() + stages[kernelgen].size() + 3));
}

}  // namespace
}  // namespace ptxbench::testing
