// `ptxbench report` and `ptxbench export` through the real CLI, against a
// scheduler that ran two small experiments with simulated workers and
// gateways: every number and file is checked against the database, the
// files read back as other tools would read them, and a failed export leaves
// nothing behind. The run happens once (a few seconds); each check is a step
// of one test, named in its failures.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file.h"
#include "common/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ptxbench/v1/common.pb.h"
#include "results/report/testing/chromium.h"
#include "results/report/testing/markup.h"
#include "testing/csv.h"
#include "tests/cluster.h"
#include "workloads/solution.h"
#include "workloads/trace.h"

namespace ptxbench::testing {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// 2 models x 2 tags x 3 samples = 12 trajectories of up to 3 turns.
std::string Spec(const std::string& name, const std::string& definition) {
  return absl::StrCat(R"({"name": ")", name, R"(", "definitions": [")", definition, R"("],
    "models": ["sim-model-a", "sim-model-b"], "prompt_tags": ["ptxb-no-hint", "ptxb-basic"],
    "samples": 3, "num_turns": 3, "target_speedup": 1.0})");
}

// The cluster's folder as the CLI names paths in it (TempDir() ends in '/').
fs::path Dir(const Cluster& c) { return fs::path(c.dir()).lexically_normal(); }

// proto3's JSON mapping writes int64 fields as strings.
int64_t Int(const Json& value) {
  return value.is_string() ? std::stoll(value.get<std::string>()) : value.get<int64_t>();
}

std::string Read(const fs::path& path) {
  absl::StatusOr<std::string> text = ReadFile(path.string());
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *std::move(text) : "";
}

Json ParseJson(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON: " << text.substr(0, 2000);
  return j;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(absl::StripSuffix(text, "\n"), '\n');
}

// Every line of a JSONL file, each a JSON object.
std::vector<Json> JsonLines(const fs::path& path) {
  std::vector<Json> out;
  const std::string text = Read(path);
  EXPECT_TRUE(absl::EndsWith(text, "\n")) << path;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    out.push_back(ParseJson(std::string(line)));
    EXPECT_TRUE(out.back().is_object()) << path << ": " << line;
  }
  return out;
}

// Regular files under `dir` (relative path -> content).
std::map<std::string, std::string> FilesUnder(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) out[fs::relative(entry.path(), dir).string()] = Read(entry.path());
  }
  return out;
}

// What the database holds of one experiment, to check the outputs against.
struct Truth {
  std::string id, name;
  int64_t trajectories = 0, turns = 0, correct = 0, passed_turns = 0;
  struct Trajectory {
    int64_t turns = 0, state = 0;
    bool correct = false;
  };
  std::map<std::string, Trajectory> by_id;
};

Truth ReadTruth(const Cluster& c, const std::string& id, const std::string& name) {
  Truth t;
  t.id = id;
  t.name = name;
  const std::string of = absl::StrCat(" trajectories WHERE experiment = (SELECT rowid FROM ",
                                      "experiments WHERE id = '", id, "')");
  const std::string turns_of =
      absl::StrCat(" turns WHERE trajectory IN (SELECT rowid FROM", of, ")");
  t.trajectories = c.QueryInt(absl::StrCat("SELECT count(*) FROM", of));
  t.correct = c.QueryInt(absl::StrCat("SELECT count(*) FROM", of, " AND correct = 1"));
  t.turns = c.QueryInt(absl::StrCat("SELECT count(*) FROM", turns_of));
  t.passed_turns = c.QueryInt(absl::StrCat("SELECT count(*) FROM", turns_of,
                                           " AND eval_status = ", static_cast<int>(v1::PASSED)));
  auto db = c.OpenDatabase();
  auto s = db->Prepare(absl::StrCat("SELECT id, turns_completed, state, correct FROM", of));
  EXPECT_TRUE(s.ok()) << s.status();
  while (s.ok() && *s->Step()) {
    t.by_id[s->ColumnText(0)] = {s->ColumnInt64(1), s->ColumnInt64(2), s->ColumnInt64(3) == 1};
  }
  return t;
}

// 1. The JSON report adds up and agrees with the database.
void CheckReportJson(const Cluster& c, const Truth& a) {
  SCOPED_TRACE("report --output json");
  CommandResult r = c.Cli(
      {"report", a.id, "--output", "json", "--by", "model", "--by", "tag,model", "--by", "turn"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json report = ParseJson(r.out);
  EXPECT_EQ(report["metrics_version"], "ptxbench.metrics.v3");
  ASSERT_EQ(report["experiments"].size(), 1u);
  const Json& e = report["experiments"][0];
  EXPECT_EQ(e["experiment_id"], a.id);
  EXPECT_EQ(e["name"], a.name);
  const Json& total = e["total"];
  EXPECT_EQ(Int(total["trajectories"]), a.trajectories);
  EXPECT_EQ(Int(total["finished"]), a.trajectories);
  EXPECT_EQ(Int(total["correct"]), a.correct);
  EXPECT_EQ(Int(total["model_calls"]), a.turns) << "every turn was answered";
  EXPECT_EQ(Int(total["simulated_trajectories"]), a.trajectories) << "simulated, and says so";
  // The fallback figures from the stored columns: no simulated answer here
  // calls a library, so every turn correct by checks PASSED.
  EXPECT_EQ(e["language"], "cuda");
  EXPECT_EQ(Int(total["passed_turns"]), a.passed_turns);
  EXPECT_EQ(Int(total["fallback_correct_turns"]), 0);
  EXPECT_EQ(Int(total["correct_by_checks"]), a.correct);
  int64_t by_state = 0;
  for (const auto& [state, n] : total["by_state"].items()) by_state += Int(n);
  EXPECT_EQ(by_state, a.trajectories);
  ASSERT_EQ(e["groupings"].size(), 3u);
  const std::vector<std::vector<std::string>> by = {{"model"}, {"tag", "model"}, {"turn"}};
  const std::vector<size_t> sizes = {2, 4, 3};
  for (size_t i = 0; i < by.size(); ++i) {
    const Json& grouping = e["groupings"][i];
    EXPECT_EQ(grouping["by"], Json(by[i]));
    ASSERT_EQ(grouping["groups"].size(), sizes[i]) << grouping["by"];
    if (by[i][0] == "turn") continue;  // a trajectory counts in every turn
    int64_t n = 0, correct = 0, calls = 0;
    for (const Json& g : grouping["groups"]) {
      n += Int(g["trajectories"]);
      correct += Int(g["correct"]);
      calls += Int(g["model_calls"]);
    }
    EXPECT_EQ(n, a.trajectories) << grouping["by"];
    EXPECT_EQ(correct, a.correct) << grouping["by"];
    EXPECT_EQ(calls, a.turns) << grouping["by"];
  }
  // The last turn's group is the whole trajectory.
  const Json& last = e["groupings"][2]["groups"].back();
  EXPECT_EQ(last["key"]["turn"], "3");
  EXPECT_EQ(Int(last["trajectories"]), a.trajectories);
  EXPECT_EQ(Int(last["correct"]), a.correct);
}

// One line on stderr (and nothing on stdout) holding `what`.
void ExpectOneLineNaming(const CommandResult& r, const std::string& what) {
  EXPECT_EQ(Lines(r.out).size(), 1u) << r.out;
  EXPECT_THAT(r.out, HasSubstr(what));
}

// 2. The table, the comparison, the CSV and the errors.
void CheckReportRenderings(const Cluster& c, const Truth& a, const Truth& b) {
  SCOPED_TRACE("report renderings");
  CommandResult table = c.Cli({"report", a.id});
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_THAT(table.out, HasSubstr(absl::StrCat("SIMULATED: ", a.trajectories, " of ",
                                                a.trajectories, " trajectories")));
  EXPECT_THAT(table.out, HasSubstr("metrics: ptxbench.metrics.v3"));

  CommandResult both = c.Cli({"report", a.id, b.id});
  ASSERT_EQ(both.exit_code, 0) << both.out;
  const size_t comparison = both.out.find("== comparison");
  ASSERT_NE(comparison, std::string::npos) << both.out;
  EXPECT_THAT(both.out.substr(comparison), HasSubstr(a.name));
  EXPECT_THAT(both.out.substr(comparison), HasSubstr(b.name));

  CommandResult csv =
      c.Cli({"report", a.id, "--output", "csv", "--by", "model", "--by", "tag,model"});
  ASSERT_EQ(csv.exit_code, 0) << csv.out;
  const std::vector<CsvRow> rows = CsvRows(csv.out, CsvLineEnd::kEither);
  ASSERT_EQ(rows.size(), 1u + 1 + 2 + 4) << csv.out;  // header, total, models, tag+model
  for (const CsvRow& row : rows) EXPECT_EQ(row.size(), rows[0].size());
  const auto column = [&](const std::string& name) {
    return std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin();
  };
  EXPECT_EQ(rows[1][column("grouping")], "total");
  EXPECT_EQ(rows[1][column("trajectories")], absl::StrCat(a.trajectories));
  EXPECT_EQ(rows[1][column("simulated_trajectories")], absl::StrCat(a.trajectories));
  EXPECT_EQ(rows[2][column("grouping")], "model");
  EXPECT_EQ(rows[4][column("grouping")], "tag+model");

  CommandResult colour = c.Cli({"report", a.id, "--by", "colour"}, /*merge_stderr=*/true);
  EXPECT_EQ(colour.exit_code, 2);
  ExpectOneLineNaming(colour, "\"colour\"");
  CommandResult nope = c.Cli({"report", "nope"}, /*merge_stderr=*/true);
  EXPECT_EQ(nope.exit_code, 1);
  ExpectOneLineNaming(nope, "'nope'");
}

// 3. The HTML page: self-contained, labelled, and (where Chromium is) every
// plot shows and the console stays silent.
void CheckReportHtml(const Cluster& c, const Truth& a, const Truth& b) {
  SCOPED_TRACE("report --html");
  const std::string path = Dir(c) / "report.html";
  CommandResult r = c.Cli({"report", a.id, b.id, "--html", path});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string html = Read(path);
  const int plots = report::testing::Occurrences(html, "<svg class=\"plot\"");
  EXPECT_GT(plots, 0);
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, HasSubstr("SIMULATED"));

  const std::string chromium = report::testing::FindChromium();
  if (chromium.empty()) {
    std::cout << "chromium is not installed (/usr/bin/chromium, or set PTXB_CHROMIUM): the "
                 "report's page is not checked in a browser\n";
    return;
  }
  report::testing::ChromiumOptions options;
  options.binary = chromium;
  options.work_dir = Dir(c) / "chromium";
  fs::create_directories(options.work_dir);
  auto probe = report::testing::ProbePlots(html, options);
  ASSERT_TRUE(probe.ok()) << probe.status();
  EXPECT_TRUE(probe->probe_logged) << "console lines are not seen; the log:\n" << probe->page.log;
  EXPECT_THAT(probe->other_console, IsEmpty()) << absl::StrJoin(probe->other_console, "\n");
  EXPECT_EQ(probe->plot_sizes.size(), static_cast<size_t>(plots)) << probe->plots;
  EXPECT_THAT(report::testing::UnsizedPlots(*probe), IsEmpty()) << probe->plots;
  if (const char* out = std::getenv("PTXB_E2E_SCREENSHOT_OUT"); out != nullptr && *out != '\0') {
    fs::copy_file(probe->page.screenshot_path, out, fs::copy_options::overwrite_existing);
  }
}

// Runs an export that must succeed; the folder it wrote.
fs::path Export(const Cluster& c, const std::vector<std::string>& args, const std::string& out) {
  std::vector<std::string> argv = {"export"};
  argv.insert(argv.end(), args.begin(), args.end());
  const fs::path path = Dir(c) / out;
  argv.insert(argv.end(), {"--out", path.string()});
  CommandResult r = c.Cli(argv, /*merge_stderr=*/true);
  EXPECT_EQ(r.exit_code, 0) << absl::StrJoin(argv, " ") << ": " << r.out;
  return path;
}

// 4. The tables: a row per turn and per workload result, in both formats.
// Returns the workload results FlashInfer-Bench can load (FORMATS.md:
// not in ptxbench's own statuses).
int64_t CheckTables(const Cluster& c, const Truth& a) {
  SCOPED_TRACE("export csv, jsonl");
  const fs::path csv = Export(c, {a.id, "--format", "csv"}, "d1");
  const fs::path jsonl = Export(c, {a.id, "--format", "jsonl"}, "d1_jsonl");
  const std::vector<CsvRow> turns = CsvRows(Read(csv / "turns.csv"), CsvLineEnd::kCrlf);
  const std::vector<CsvRow> workloads = CsvRows(Read(csv / "workloads.csv"), CsvLineEnd::kCrlf);
  EXPECT_EQ(static_cast<int64_t>(turns.size()), a.turns + 1);
  for (const CsvRow& row : turns) EXPECT_EQ(row.size(), turns[0].size());
  for (const CsvRow& row : workloads) EXPECT_EQ(row.size(), workloads[0].size());
  const std::vector<Json> turn_lines = JsonLines(jsonl / "turns.jsonl");
  const std::vector<Json> workload_lines = JsonLines(jsonl / "workloads.jsonl");
  EXPECT_EQ(static_cast<int64_t>(turn_lines.size()), a.turns);
  EXPECT_GT(workload_lines.size(), 0u);
  EXPECT_EQ(workload_lines.size() + 1, workloads.size()) << "csv and jsonl disagree";
  int64_t correct = 0, loadable = 0;
  for (const Json& t : turn_lines) correct += t["correct"].get<bool>();
  EXPECT_EQ(correct, a.passed_turns);
  for (const Json& w : workload_lines) {
    EXPECT_EQ(w["simulated"], true);
    const std::string status = w["status"].get<std::string>();
    loadable += status != "LIBRARY_FALLBACK" && status != "COMPILED" && status != "INFRA_ERROR";
  }
  return loadable;
}

// 5. PTXBench's output root.
void CheckPtxbenchExport(const Cluster& c, const Truth& a) {
  SCOPED_TRACE("export ptxbench");
  const fs::path root = Export(c, {a.id, "--format", "ptxbench"}, "d2");
  const Json plan = ParseJson(Read(root / "plan.json"));
  EXPECT_EQ(static_cast<int64_t>(plan["plan"].size()), a.trajectories);
  const Json summary = ParseJson(Read(root / "summary.json"));
  EXPECT_EQ(summary["total"], a.trajectories);
  EXPECT_EQ(summary["correct_trajectory"], a.correct);
  EXPECT_EQ(summary["correct_kernel_versions"], a.passed_turns);
  EXPECT_EQ(summary["simulated"], true);
  ASSERT_TRUE(fs::exists(root / "trajectories/exp_000.json"));
  ASSERT_EQ(static_cast<int64_t>(summary["results"].size()), a.trajectories);
  int64_t kernels = 0;
  for (const Json& result : summary["results"]) {
    const std::string id = result["trajectory_id"].get<std::string>();
    const std::string exp = result["exp_name"].get<std::string>();
    SCOPED_TRACE(absl::StrCat(exp, " ", id));
    ASSERT_TRUE(a.by_id.contains(id));
    const Truth::Trajectory& t = a.by_id.at(id);
    const Json trajectory = ParseJson(Read(result["trajectory"].get<std::string>()));
    EXPECT_EQ(trajectory["trajectory_format"], "mini-swe-agent-1.1");
    const bool exits =
        t.state == v1::SUBMITTED || t.state == v1::LIMITS_EXCEEDED || t.state == v1::FAILED;
    EXPECT_EQ(static_cast<int64_t>(trajectory["messages"].size()), 2 + 2 * t.turns + exits);
    EXPECT_EQ(trajectory["messages"].back()["role"], exits ? "exit" : "user");
    const fs::path success = root / "success" / exp;
    EXPECT_EQ(fs::exists(success / "kernel_v0.cu"), t.correct);
    if (!fs::exists(success)) continue;
    for (const auto& f : fs::directory_iterator(success)) kernels += f.path().extension() == ".cu";
  }
  EXPECT_EQ(kernels, a.passed_turns) << "every correct kernel, once";
}

// 6. The FlashInfer-Trace dataset, read back by ptxbench's own loaders.
void CheckFlashinferExport(const Cluster& c, const Truth& a, int64_t expected_traces) {
  SCOPED_TRACE("export flashinfer-trace");
  const fs::path root = Export(c, {a.id, "--format", "flashinfer-trace"}, "d3");
  CommandResult defs =
      c.Cli({"definitions", "--dataset", root.string(), "--prefer-dataset", "--output", "json"},
            /*merge_stderr=*/true);
  ASSERT_EQ(defs.exit_code, 0) << defs.out;
  const Json listed = ParseJson(defs.out);  // a warning on stderr would not parse
  EXPECT_THAT(listed["skipped"], IsEmpty());
  std::set<std::string> workload_ids;
  bool found = false;
  for (const Json& d : listed["definitions"]) {
    if (d["name"] != "gemm_n7168_k5120") continue;
    found = true;
    EXPECT_EQ(d["dataset"], root.string()) << "the dataset's definition replaced the bundled one";
    EXPECT_GT(d["workloads"].get<int>(), 0);
  }
  EXPECT_TRUE(found) << defs.out;
  for (const Json& w : JsonLines(root / "workloads/gemm/gemm_n7168_k5120.jsonl")) {
    workload_ids.insert(w["workload"]["uuid"].get<std::string>());
  }

  std::set<std::string> solutions;
  for (const auto& [path, text] : FilesUnder(root / "solutions")) {
    auto solution = workloads::ParseSolution(text, path);
    EXPECT_TRUE(solution.ok()) << solution.status();
    solutions.insert(fs::path(path).stem().string());
  }
  int64_t traces = 0;
  std::set<std::string> unknown;
  for (const auto& [path, text] : FilesUnder(root / "traces")) {
    for (const std::string& line : Lines(text)) {
      ++traces;
      auto trace = workloads::ParseTraceLine(line, path);
      ASSERT_TRUE(trace.ok()) << trace.status();
      EXPECT_TRUE(trace->solution && solutions.contains(*trace->solution)) << line;
      if (!workload_ids.contains(trace->workload.uuid)) unknown.insert(trace->workload.uuid);
    }
  }
  EXPECT_EQ(traces, expected_traces);
  EXPECT_THAT(unknown, IsEmpty()) << "traces of workloads the dataset does not have";
}

// 7. SFT records, one per correct trajectory with --filter best, and a
// manifest whose hashes hold.
void CheckSftExport(const Cluster& c, const Truth& a) {
  SCOPED_TRACE("export sft");
  const fs::path root = Export(c, {a.id, "--format", "sft", "--filter", "best"}, "d4");
  const std::vector<Json> records = JsonLines(root / "sft.jsonl");
  EXPECT_EQ(static_cast<int64_t>(records.size()), a.correct);
  std::set<std::string> trajectories;
  for (const Json& r : records) {
    trajectories.insert(r["metadata"]["trajectory_id"].get<std::string>());
    EXPECT_EQ(r["messages"].back()["role"], "assistant");
    EXPECT_EQ(r["messages"].back()["step_loss_mask"], 1);
  }
  EXPECT_EQ(static_cast<int64_t>(trajectories.size()), a.correct) << "one per trajectory";
  const Json manifest = ParseJson(Read(root / "sft.manifest.json"));
  EXPECT_EQ(manifest["filter"], "best");
  EXPECT_EQ(manifest["counts"]["records"], records.size());
  std::set<std::string> listed;
  for (const Json& f : manifest["files"]) {
    const std::string path = f["path"].get<std::string>();
    listed.insert(path);
    const std::string content = Read(root / path);
    EXPECT_EQ(f["sha256"], Sha256Hex(content)) << path;
    EXPECT_EQ(f["bytes"], content.size()) << path;
  }
  std::set<std::string> written;
  for (const auto& [path, text] : FilesUnder(root)) written.insert(path);
  written.erase("sft.manifest.json");
  EXPECT_EQ(listed, written);
}

// 8. A refused export changes nothing and creates nothing.
void CheckNothingHalfCreated(const Cluster& c, const Truth& a) {
  SCOPED_TRACE("refused exports");
  const fs::path d1 = Dir(c) / "d1";
  const auto before = FilesUnder(d1);
  ASSERT_FALSE(before.empty());
  CommandResult again = c.Cli({"export", a.id, "--format", "csv", "--out", d1.string()}, true);
  EXPECT_EQ(again.exit_code, 1);
  ExpectOneLineNaming(again, d1.string());
  EXPECT_EQ(FilesUnder(d1), before);

  const fs::path d5 = Dir(c) / "d5";
  CommandResult nope = c.Cli({"export", "nope", "--format", "csv", "--out", d5.string()}, true);
  EXPECT_EQ(nope.exit_code, 1);
  ExpectOneLineNaming(nope, "'nope'");
  EXPECT_FALSE(fs::exists(d5));
  for (const auto& entry : fs::directory_iterator(Dir(c))) {
    EXPECT_FALSE(absl::StrContains(entry.path().filename().string(), ".partial-")) << entry.path();
  }
  // The exported folders are the user's, as mkdir would make them.
  const fs::path made = Dir(c) / "made_by_mkdir";
  fs::create_directory(made);
  EXPECT_EQ(fs::status(d1).permissions(), fs::status(made).permissions());
}

// 9. `show`, as a table and as JSON, of the trajectory with the most turns.
void CheckShow(const Cluster& c, const Truth& a) {
  SCOPED_TRACE("show");
  std::string id;
  int64_t turns = 0;
  for (const auto& [candidate, t] : a.by_id) {
    if (t.turns > turns) std::tie(id, turns) = std::tie(candidate, t.turns);
  }
  ASSERT_GT(turns, 1);
  CommandResult table = c.Cli({"show", id});
  ASSERT_EQ(table.exit_code, 0) << table.out;
  for (int i = 0; i < turns; ++i) {
    EXPECT_THAT(table.out, HasSubstr(absl::StrCat("== turn ", i, " (")));
  }
  EXPECT_THAT(table.out, Not(HasSubstr(absl::StrCat("== turn ", turns, " ("))));
  CommandResult json = c.Cli({"show", id, "--output", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const Json shown = ParseJson(json.out);
  EXPECT_EQ(shown["trajectory"], id);
  ASSERT_EQ(static_cast<int64_t>(shown["turns"].size()), turns);
  for (int i = 0; i < turns; ++i) EXPECT_EQ(shown["turns"][i]["index"], i);
}

TEST(ResultsEndToEndTest, ReportAndExportAgreeWithTheDatabase) {
  Cluster c("results_e2e");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  for (int i = 0; i < 2; ++i) c.AddWorker({"--latency-ms", "5", "--seed", "1"});
  for (int i = 0; i < 2; ++i) c.AddGateway({"--latency-ms", "5", "--seed", "7"});
  const std::string a = c.Submit(c.WriteFile("a.json", Spec("results-a", "gemm_n7168_k5120")));
  const std::string b = c.Submit(c.WriteFile("b.json", Spec("results-b", "mha_with_lse_d128")));
  ASSERT_FALSE(a.empty() || b.empty()) << c.SchedulerLogTail();
  for (const std::string& exp : {a, b}) {
    const Json status = c.WaitFinished(exp, 120);
    ASSERT_TRUE(status.is_object()) << c.SchedulerLogTail();
    ASSERT_EQ(status["trajectories"]["terminal"], status["trajectories"]["total"]) << status.dump();
  }
  const Truth truth_a = ReadTruth(c, a, "results-a");
  const Truth truth_b = ReadTruth(c, b, "results-b");
  ASSERT_EQ(truth_a.trajectories, 12);
  ASSERT_GT(truth_a.correct, 0) << "the checks of correct kernels need some";

  CheckReportJson(c, truth_a);
  CheckReportRenderings(c, truth_a, truth_b);
  CheckReportHtml(c, truth_a, truth_b);
  const int64_t loadable_traces = CheckTables(c, truth_a);
  CheckPtxbenchExport(c, truth_a);
  CheckFlashinferExport(c, truth_a, loadable_traces);
  CheckSftExport(c, truth_a);
  CheckNothingHalfCreated(c, truth_a);
  CheckShow(c, truth_a);
}

}  // namespace
}  // namespace ptxbench::testing
