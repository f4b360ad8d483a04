// The ptxbench export checked field by field against the PTXBench output
// root (COMPATIBILITY facts in docs/FORMATS.md, "Exports"): every file, every
// field PTXBench names with its type, the message indices, the events and
// the exit message.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "results/exports/export.h"
#include "results/exports/testing/scratch.h"
#include "results/exports/testing/trajectories.h"
#include "workloads/trace.h"

namespace ptxbench::exports {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = nlohmann::ordered_json;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::TurnKind;

class PtxbenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trajectories_ = {
        testing::Trajectory(0, v1::SUBMITTED,
                            {{TurnKind::kNoCode},
                             {TurnKind::kIncorrect},
                             {TurnKind::kCorrect, 1.0},
                             {TurnKind::kCorrect, 2.0}}),
        testing::Trajectory(1, v1::LIMITS_EXCEEDED,
                            {{TurnKind::kCompileError},
                             {TurnKind::kCudnn},
                             {TurnKind::kNoCode},
                             {TurnKind::kCompiled}}),
        testing::Trajectory(2, v1::FAILED, {{TurnKind::kCorrect, 1.2}, {TurnKind::kAwaitingModel}}),
        testing::Trajectory(3, v1::AWAITING_EVAL,
                            {{TurnKind::kIncorrect}, {TurnKind::kAwaitingEval}}),
    };
    Options options;
    options.ptxbench_version = "0.1.0";
    options.now = absl::FromUnixSeconds(1767225600);
    ASSERT_TRUE(testing::ExportAll(Format::kPtxbench, out(), options, testing::Experiment(),
                                   testing::Definitions(), trajectories_)
                    .ok());
  }

  std::string out() const { return scratch_ / "root"; }
  Json Read(const std::string& relative) const {
    auto text = ReadFile(scratch_ / ("root/" + relative));
    EXPECT_TRUE(text.ok()) << text.status();
    return Json::parse(text.value_or("null"));
  }

  testing::Scratch scratch_;
  std::vector<v1::Trajectory> trajectories_;
};

// `j[key]` exists and is of the kind named.
void ExpectField(const Json& j, const std::string& key, const std::string& kind) {
  ASSERT_TRUE(j.contains(key)) << key << " missing in " << j.dump().substr(0, 300);
  const Json& v = j[key];
  bool ok = false;
  if (kind == "string") ok = v.is_string();
  if (kind == "int") ok = v.is_number_integer();
  if (kind == "number") ok = v.is_number();
  if (kind == "bool") ok = v.is_boolean();
  if (kind == "object") ok = v.is_object();
  if (kind == "array") ok = v.is_array();
  if (kind == "null") ok = v.is_null();
  if (kind == "number|null") ok = v.is_number() || v.is_null();
  if (kind == "string|null") ok = v.is_string() || v.is_null();
  EXPECT_TRUE(ok) << key << " should be " << kind << ", is " << v.dump().substr(0, 100);
}

TEST_F(PtxbenchTest, WritesTheOutputRootLayout) {
  EXPECT_THAT(testing::FilesUnder(out()),
              ElementsAre("logs/exp_000.log", "logs/exp_001.log", "logs/exp_002.log",
                          "logs/exp_003.log", "plan.json", "success/exp_000/kernel_v0.cu",
                          "success/exp_000/kernel_v1.cu", "success/exp_000/record.json",
                          "success/exp_002/kernel_v0.cu", "success/exp_002/record.json",
                          "summary.json", "trajectories/exp_000.json", "trajectories/exp_001.json",
                          "trajectories/exp_002.json", "trajectories/exp_003.json"));
}

TEST_F(PtxbenchTest, PlanHasOneEntryPerTrajectory) {
  const Json plan = Read("plan.json");
  ExpectField(plan, "config", "string");
  ExpectField(plan, "plan", "array");
  ASSERT_EQ(plan["plan"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const Json& e = plan["plan"][i];
    ExpectField(e, "exp_index", "int");
    EXPECT_EQ(e["exp_index"], i);
    ExpectField(e, "num_trajectories", "int");
    EXPECT_EQ(e["num_trajectories"], 2);  // the spec's samples
    ExpectField(e, "num_turns", "int");
    ExpectField(e, "target_speedup", "number");
    ExpectField(e, "prompt_tag", "string");
    ExpectField(e, "definition", "string");
    // A matrix spec has no test script; ptxbench's own keys start with "_".
    EXPECT_FALSE(e.contains("test_path"));
    for (const auto& [key, value] : e.items()) {
      const std::set<std::string> ptxbench_keys = {"exp_index", "num_trajectories", "num_turns",
                                                   "target_speedup", "prompt_tag", "definition"};
      if (!ptxbench_keys.contains(key)) EXPECT_EQ(key[0], '_') << key;
    }
  }
  EXPECT_EQ(plan["plan"][2]["_trajectory_id"], "tr_test_2");
}

TEST_F(PtxbenchTest, SummaryCountsTheThreeOutcomesApart) {
  const Json s = Read("summary.json");
  ExpectField(s, "timestamp", "string");
  EXPECT_EQ(s["timestamp"], "2026-01-01T00:00:00.000000+00:00");
  const std::vector<std::string> counts = {"total", "completed", "correct_trajectory",
                                           "correct_kernel_versions", "target_met", "failed",
                                           "infra_failed", "api_failed", "timeout", "error"};
  for (const std::string& key : counts) ExpectField(s, key, "int");
  for (const char* key : {"avg_duration", "min_duration", "max_duration"}) {
    ExpectField(s, key, "number");
  }
  ExpectField(s, "by_prompt_tag", "object");
  ExpectField(s, "results", "array");
  EXPECT_EQ(s["total"], 4);
  EXPECT_EQ(s["completed"], 2);  // SUBMITTED and LIMITS_EXCEEDED: the runner completed
  EXPECT_EQ(s["correct_trajectory"], 2);
  EXPECT_EQ(s["correct_kernel_versions"], 3);
  EXPECT_EQ(s["target_met"], 1);
  EXPECT_EQ(s["failed"], 1);
  EXPECT_EQ(s["unknown"], 1);  // still awaiting its evaluation
  EXPECT_EQ(s["max_duration"], 35);  // exp_000: 4 turns, 10 s apart, 5 s each
  EXPECT_EQ(s["simulated"], false);
  const Json& tag = s["by_prompt_tag"]["ptxb-basic"];
  for (const char* key : {"total", "success", "failed", "infra_failed", "api_failed", "timeout",
                          "error", "correct_trajectory", "correct_kernel_versions", "target_met"}) {
    ExpectField(tag, key, "int");
  }
  EXPECT_EQ(tag["total"], 4);
  EXPECT_EQ(tag["correct_kernel_versions"], 3);

  ASSERT_EQ(s["results"].size(), 4u);
  const std::vector<std::string> statuses = {"success", "success", "failed", "unknown"};
  for (size_t i = 0; i < 4; ++i) {
    const Json& r = s["results"][i];
    ExpectField(r, "exp_index", "int");
    EXPECT_EQ(r["exp_index"], i);
    ExpectField(r, "exp_name", "string");
    EXPECT_EQ(r["exp_name"], absl::StrCat("exp_00", i));
    ExpectField(r, "status", "string");
    EXPECT_EQ(r["status"], statuses[i]);
    ExpectField(r, "duration", "number");
    ExpectField(r, "trajectory", "string");
    EXPECT_EQ(r["trajectory"], absl::StrCat(out(), "/trajectories/exp_00", i, ".json"));
    ExpectField(r, "runner_completed", "bool");
    ExpectField(r, "generated_candidate", "bool");
    ExpectField(r, "correct_kernel_count", "int");
    ExpectField(r, "target_met", "bool");
    ExpectField(r, "error", "string|null");
    ExpectField(r, "simulated", "bool");
  }
  EXPECT_EQ(s["results"][0]["correct_kernel_count"], 2);
  EXPECT_EQ(s["results"][0]["target_met"], true);
  EXPECT_EQ(s["results"][2]["error"], "context window exceeded");
}

// The message list of mini-swe-agent 1.1 as PTXBench fills it.
TEST_F(PtxbenchTest, TrajectoryMessagesSitAtTheirIndices) {
  const Json t = Read("trajectories/exp_000.json");
  std::vector<std::string> keys;
  for (const auto& [key, value] : t.items()) keys.push_back(key);
  EXPECT_THAT(keys, ElementsAre("info", "messages", "trajectory_format"));
  EXPECT_EQ(t["trajectory_format"], "mini-swe-agent-1.1");
  const Json& info = t["info"];
  ExpectField(info, "model_stats", "object");
  ExpectField(info["model_stats"], "instance_cost", "number");
  ExpectField(info["model_stats"], "api_calls", "int");
  EXPECT_EQ(info["model_stats"]["api_calls"], 4);
  ExpectField(info, "config", "object");
  ExpectField(info, "mini_version", "string");
  ExpectField(info, "exit_status", "string");
  EXPECT_EQ(info["exit_status"], "Submitted");
  ExpectField(info, "submission", "string");

  const v1::Trajectory& source = trajectories_[0];
  const Json& m = t["messages"];
  ASSERT_EQ(m.size(), 2u + 2 * 4 + 1);
  EXPECT_EQ(m[0]["role"], "system");
  EXPECT_EQ(m[0]["content"], source.system_prompt());
  EXPECT_EQ(m[1]["role"], "user");
  EXPECT_EQ(m[1]["content"], source.task_prompt());
  const std::vector<std::string> events = {"no_code", "evaluation", "evaluation", "evaluation"};
  for (int turn = 0; turn < 4; ++turn) {
    SCOPED_TRACE(absl::StrCat("turn ", turn));
    const Json& a = m[2 + 2 * turn];
    EXPECT_EQ(a["role"], "assistant");
    EXPECT_EQ(a["content"], source.turns(turn).response().text());
    ExpectField(a, "extra", "object");
    ExpectField(a["extra"], "response", "object");
    ExpectField(a["extra"]["response"], "usage", "object");
    ExpectField(a["extra"]["response"]["usage"], "prompt_tokens", "int");
    ExpectField(a["extra"]["response"]["usage"], "completion_tokens", "int");
    ExpectField(a["extra"], "cost", "number");
    ExpectField(a["extra"], "timestamp", "number|null");

    const Json& f = m[3 + 2 * turn];
    EXPECT_EQ(f["role"], "user");
    const Json& x = f["extra"];
    ExpectField(x, "returncode", "int");
    ExpectField(x, "timestamp", "number");
    ExpectField(x, "event", "string");
    EXPECT_EQ(x["event"], events[turn]);
    EXPECT_EQ(f["content"], absl::StrCat("<returncode>", x["returncode"].get<int>(),
                                         "</returncode>\n<output>\n",
                                         source.turns(turn).feedback(), "</output>"));
    EXPECT_EQ(x["raw_output"], source.turns(turn).feedback());
    if (events[turn] == "evaluation") {
      ExpectField(x, "traces", "array");
      ExpectField(x, "all_passed", "bool");
      ExpectField(x, "min_speedup", "number");
      ExpectField(x, "target_met", "bool");
      for (const Json& trace : x["traces"]) {
        auto parsed = workloads::ParseTraceLine(trace.dump(), "trace");
        EXPECT_TRUE(parsed.ok()) << parsed.status();
      }
    } else {
      EXPECT_FALSE(x.contains("traces"));
    }
  }
  EXPECT_EQ(m[3]["extra"]["returncode"], 1);
  EXPECT_EQ(m[5]["extra"]["all_passed"], false);
  EXPECT_EQ(m[5]["extra"]["min_speedup"], 0.0);  // PTXBench's: 0 unless all passed
  EXPECT_EQ(m[7]["extra"]["returncode"], 0);
  EXPECT_EQ(m[7]["extra"]["all_passed"], true);
  EXPECT_EQ(m[7]["extra"]["min_speedup"], 1.0);
  EXPECT_EQ(m[7]["extra"]["target_met"], false);
  EXPECT_EQ(m[9]["extra"]["target_met"], true);
  EXPECT_EQ(m[9]["extra"]["traces"].size(), 2u);
  EXPECT_EQ(m[2]["reasoning_content"], "thinking...");

  const Json& exit = m[10];
  EXPECT_EQ(exit["role"], "exit");
  EXPECT_EQ(exit["content"], "Target speedup achieved.");
  EXPECT_EQ(exit["extra"]["exit_status"], "Submitted");
  EXPECT_EQ(exit["extra"]["submission"], source.turns(3).kernel_source());
  EXPECT_EQ(exit["extra"]["min_speedup"], 2.0);
  EXPECT_EQ(info["submission"], source.turns(3).kernel_source());
}

TEST_F(PtxbenchTest, EventsNameWhatPtxbenchWouldHaveSeen) {
  const Json m = Read("trajectories/exp_001.json")["messages"];
  ASSERT_EQ(m.size(), 2u + 8 + 1);
  EXPECT_EQ(m[3]["extra"]["event"], "test_failed");
  EXPECT_TRUE(m[3]["extra"]["traces"].is_null());
  EXPECT_EQ(m[5]["extra"]["event"], "cudnn_banned");
  EXPECT_EQ(m[7]["extra"]["event"], "no_code");
  EXPECT_EQ(m[9]["extra"]["event"], "no_traces");
  EXPECT_TRUE(m[9]["extra"]["traces"].is_null());
  EXPECT_EQ(m[10]["role"], "exit");
  EXPECT_EQ(m[10]["extra"]["exit_status"], "LimitsExceeded");
  EXPECT_EQ(m[10]["extra"]["submission"], "");
}

TEST_F(PtxbenchTest, AFailureExitsWithItsClass) {
  const Json t = Read("trajectories/exp_002.json");
  const Json& m = t["messages"];
  ASSERT_EQ(m.size(), 2u + 2 + 1);  // the second turn never got its answer
  EXPECT_EQ(m[4]["role"], "exit");
  EXPECT_EQ(m[4]["content"], "context window exceeded");
  EXPECT_EQ(m[4]["extra"]["exit_status"], "TerminalError");
  EXPECT_EQ(t["info"]["exit_status"], "TerminalError");
}

TEST_F(PtxbenchTest, ALiveTrajectoryHasNoExit) {
  const Json t = Read("trajectories/exp_003.json");
  const Json& m = t["messages"];
  ASSERT_EQ(m.size(), 5u);  // the second answer awaits its evaluation
  EXPECT_EQ(m[4]["role"], "assistant");
  EXPECT_EQ(t["info"]["exit_status"], "");
}

TEST_F(PtxbenchTest, SuccessHoldsEveryCorrectVersion) {
  auto v0 = ReadFile(scratch_ / "root/success/exp_000/kernel_v0.cu");
  ASSERT_TRUE(v0.ok());
  EXPECT_EQ(*v0, trajectories_[0].turns(2).kernel_source());
  const Json record = Read("success/exp_000/record.json");
  ASSERT_TRUE(record.is_array());
  ASSERT_EQ(record.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    ExpectField(record[k], "version", "int");
    EXPECT_EQ(record[k]["version"], k);
    ExpectField(record[k], "turn", "int");
    EXPECT_EQ(record[k]["turn"], 2 + k);
    ExpectField(record[k], "timestamp", "string");
    ExpectField(record[k], "traces", "array");
  }
  EXPECT_EQ(record[0]["traces"][0]["evaluation"]["status"], "PASSED");
}

TEST(PtxbenchFormatTest, NamesPtxKernelsAndLabelsSimulatedResults) {
  testing::Scratch scratch;
  ASSERT_TRUE(testing::ExportAll(
                  Format::kPtxbench, scratch / "root", {}, testing::Experiment("ptx"),
                  testing::Definitions(),
                  {testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kCorrect, 2.0, true}}, "ptx")})
                  .ok());
  EXPECT_THAT(testing::FilesUnder(scratch / "root"),
              ::testing::Contains("success/exp_000/kernel_v0.ptx"));
  const Json s = Json::parse(*ReadFile(scratch / "root/summary.json"));
  EXPECT_EQ(s["simulated"], true);
  EXPECT_EQ(s["results"][0]["simulated"], true);
  const Json t = Json::parse(*ReadFile(scratch / "root/trajectories/exp_000.json"));
  EXPECT_EQ(t["info"]["simulated"], true);
  EXPECT_EQ(t["messages"][3]["extra"]["simulated"], true);
}

// A Triton experiment's correct kernels are kernel_v{k}.py, as they were.
TEST(PtxbenchFormatTest, NamesTritonKernelsPy) {
  testing::Scratch scratch;
  const v1::Trajectory t =
      testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kCorrect, 2.0}}, "triton");
  ASSERT_TRUE(testing::ExportAll(Format::kPtxbench, scratch / "root", {},
                                 testing::Experiment("triton"), testing::Definitions(), {t})
                  .ok());
  EXPECT_THAT(testing::FilesUnder(scratch / "root"),
              ::testing::Contains("success/exp_000/kernel_v0.py"));
  EXPECT_EQ(*ReadFile(scratch / "root/success/exp_000/kernel_v0.py"), t.turns(0).kernel_source());
}

TEST(PtxbenchFormatTest, NumbersPastNineHundredNinetyNineTakeMoreDigits) {
  testing::Scratch scratch;
  std::vector<v1::Trajectory> many;
  for (int i = 0; i < 1001; ++i) many.push_back(testing::Trajectory(i, v1::LIMITS_EXCEEDED, {}));
  ASSERT_TRUE(testing::ExportAll(Format::kPtxbench, scratch / "root", {}, testing::Experiment(),
                                 testing::Definitions(), many)
                  .ok());
  const std::vector<std::string> files = testing::FilesUnder(scratch / "root/trajectories");
  ASSERT_EQ(files.size(), 1001u);
  EXPECT_EQ(files.front(), "exp_000.json");
  EXPECT_EQ(files.back(), "exp_999.json");  // sorted as text: exp_1000 comes earlier
  EXPECT_THAT(files, ::testing::Contains("exp_1000.json"));
}

}  // namespace
}  // namespace ptxbench::exports
