// An agent experiment through the whole system, per pinned CLI: the real
// scheduler, a real worker, and a gateway with agent slots running the real
// CLI in its sandbox against a scripted model. The model writes a correct
// GEMM kernel with the CLI's own tool and evaluates it; the worker evaluates
// it (compile-only without a GPU, compiled, checked and timed with one);
// the session ends when the CLI finishes. Skips, saying so, where the CLI
// is not installed, nvcc is missing, or the test does not run as root (the
// session's sandbox needs its own uid).

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "agents/clis.h"
#include "ptxbench/v1/common.pb.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "results/report/testing/chromium.h"
#include "testing/pinned_clis.h"
#include "testing/require_gpu.h"
#include "testing/scripted_model.h"
#include "tests/cluster.h"
#include "tests/testing/agent_steps.h"

namespace ptxbench::testing {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using Json = nlohmann::json;

class AgentEndToEndTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cli_ = agents::FindAgentCli(GetParam());
    ASSERT_NE(cli_, nullptr);
    if (const std::string why = WhyNoSession(*cli_); !why.empty()) GTEST_SKIP() << why;
    if (!fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no nvcc: nothing evaluates";
    gpu_ = NoGpuReason().empty();
  }

  // Write the kernel with the CLI's own tool, evaluate it, finish. The
  // session of the experiment's only task (tk_1) works in `workspace`.
  std::vector<ScriptedModel::Step> Steps(const std::string& kernel,
                                         const std::string& workspace) const {
    return WriteAndEvaluate(*cli_, workspace, "kernel.cu", kernel);
  }

  const agents::AgentCli* cli_ = nullptr;
  bool gpu_ = false;
};

// `ptxbench up --submit SPEC --exit-when-done` with an agent-mode SPEC: the
// scheduler, a worker and an agent gateway on this machine, and the
// experiment run to its end.
TEST_P(AgentEndToEndTest, UpRunsAnAgentExperimentToItsEnd) {
  absl::StatusOr<std::string> kernel = ReadFile(DataDir() + "/worker/testdata/gemm/correct.cu");
  ASSERT_TRUE(kernel.ok());
  Cluster c(absl::StrCat("e2e_agent_", cli_->name));  // its directory and port; `up` starts it
  ScriptedModel model(cli_->wire, Steps(*kernel, c.dir() + "/sessions/tk_1-1/workspace"));
  ASSERT_GT(model.port(), 0);
  Json entry = ScriptedAgentModel(*cli_, model.port());
  entry["price"] = {{"input_per_mtok", 1.0}, {"output_per_mtok", 4.0}};
  const std::string models =
      c.WriteFile("models.json", Json{{"models", {{"scripted-agent", entry}}}}.dump());
  const std::string spec = c.WriteFile(
      "spec.json",
      Json{{"name", "agent"},
           {"models", {"scripted-agent"}},
           {"definitions", {"gemm_n7168_k5120"}},
           {"prompt_tags", {"ptxb-no-hint"}},
           {"samples", 1},
           {"target_speedup", 0.001},
           {"eval", gpu_ ? "full" : "compile-only"},
           {"mode", "agent"},
           {"agent", {{"cli", cli_->name}, {"cli_version", cli_->version},
                      {"token_budget", 100000}, {"stall_timeout", "60s"}}}}
          .dump());
  const CommandResult up =
      c.Cli({"up", "--submit", spec, "--exit-when-done", "--models", models}, true);
  ASSERT_EQ(up.exit_code, 0) << up.out << Tail(c.dir() + "/logs/agents.log");
  EXPECT_NE(up.out.find("agent"), std::string::npos) << up.out;

  // One turn: the kernel the session wrote, evaluated by the worker.
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM turns WHERE action_id IS NOT NULL"), 1);
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM trajectories WHERE agent_outcome IS NOT NULL"), 1);
  {
    // Its records are blobs of the database, named in the outcome.
    auto db = c.OpenDatabase();
    auto s = db->Prepare("SELECT agent_outcome FROM trajectories");
    ASSERT_TRUE(s.ok() && *s->Step());
    v1::AgentOutcome outcome;
    ASSERT_TRUE(outcome.ParseFromString(s->ColumnBlob(0)));
    EXPECT_EQ(outcome.end(), v1::AGENT_FINISHED);
    std::set<std::string> names;
    for (const v1::AgentRecord& r : outcome.records()) {
      names.insert(r.name());
      EXPECT_EQ(c.QueryInt(absl::StrCat("SELECT count(*) FROM blobs WHERE hash = '", r.blob(), "'")),
                1) << r.name();
    }
    EXPECT_TRUE(names.count("events.jsonl") && names.count("model_calls.jsonl") &&
                names.count("workspace/kernel.cu"))
        << outcome.DebugString();
  }
  if (gpu_) {
    EXPECT_EQ(c.QueryInt("SELECT eval_status FROM turns"), 1) << "PASSED";
    EXPECT_GT(c.QueryInt("SELECT count(*) FROM turns WHERE speedup > 0"), 0) << "timed";
    EXPECT_EQ(c.QueryInt("SELECT state FROM trajectories"), 3) << "SUBMITTED\n" << up.out;
  } else {
    EXPECT_EQ(c.QueryInt("SELECT eval_status FROM turns"), 10) << "COMPILED";
    EXPECT_EQ(c.QueryInt("SELECT state FROM trajectories"), 4)
        << "LIMITS_EXCEEDED: compile-only never meets a target; the agent finished\n" << up.out;
  }
  // The feedback went back to the model as the tool's result.
  const std::vector<Json> requests = model.requests();
  ASSERT_FALSE(requests.empty());
  const std::string result = model.ToolResults(requests.back()).back().dump();
  EXPECT_NE(result.find(gpu_ ? "PASSED" : "Compilation succeeded"), std::string::npos) << result;
}

// An agent experiment and a multiturn experiment of the same matrix, side
// by side in one report: Claude Code sessions against scripted model turns
// (the same correct kernel from a folder of answers).
TEST(AgentReportTest, AgentAndMultiturnExperimentsSideBySide) {
  const agents::AgentCli* cli = agents::FindAgentCli("claude-code");
  if (!fs::exists(fs::path(DataDir()) / "third_party/agent-clis/node_modules" / cli->executable)) {
    GTEST_SKIP() << "claude-code is not installed (scripts/setup.sh installs it)";
  }
  if (!fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no nvcc: nothing evaluates";
  if (geteuid() != 0) GTEST_SKIP() << "a session's sandbox runs it as its own uid: needs root";
  const bool gpu = NoGpuReason().empty();
  absl::StatusOr<std::string> kernel = ReadFile(DataDir() + "/worker/testdata/gemm/correct.cu");
  ASSERT_TRUE(kernel.ok());
  Cluster c("e2e_agent_report");
  ScriptedModel model(cli->wire,
                      {{"Write", {{"file_path", c.dir() + "/sessions/tk_1-1/workspace/kernel.cu"},
                                  {"content", *kernel}}},
                       {"mcp__ptxbench__evaluate_kernel"}});
  c.WriteFile("answers/gemm_n7168_k5120/answer.cu", *kernel);
  const std::string models = c.WriteFile(
      "models.json",
      Json{{"models",
            {{"scripted-agent",
              {{"provider", "anthropic"},
               {"base_url", absl::StrCat("http://127.0.0.1:", model.port())},
               {"model_id", "pinned-model"}}},
             {"scripted-turns", {{"provider", "scripted"}, {"answers_dir", c.dir() + "/answers"}}}}}}
          .dump());
  const Json matrix = {{"definitions", {"gemm_n7168_k5120"}},
                       {"prompt_tags", {"ptxb-no-hint"}},
                       {"samples", 1},
                       {"target_speedup", 0.001},
                       {"eval", gpu ? "full" : "compile-only"}};
  Json agent = matrix, multiturn = matrix;
  agent.update({{"name", "agent"}, {"models", {"scripted-agent"}}, {"mode", "agent"},
                {"agent", {{"cli", cli->name}, {"cli_version", cli->version},
                           {"token_budget", 100000}}}});
  multiturn.update({{"name", "multiturn"}, {"models", {"scripted-turns"}}, {"num_turns", 1}});
  for (const Json& spec : {agent, multiturn}) {
    const CommandResult up =
        c.Cli({"up", "--submit", c.WriteFile(spec["name"].get<std::string>() + ".json", spec.dump()),
               "--exit-when-done", "--models", models},
              true);
    ASSERT_EQ(up.exit_code, 0) << up.out;
  }
  // The scheduler again on the same database, for the report.
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  const CommandResult report = c.Cli({"report", "agent", "multiturn"});
  ASSERT_EQ(report.exit_code, 0) << report.out;
  EXPECT_NE(report.out.find("agent"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("multiturn"), std::string::npos) << report.out;
  const CommandResult json = c.Cli({"report", "agent", "multiturn", "--output", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const Json r = Json::parse(json.out);
  ASSERT_EQ(r["experiments"].size(), 2u) << json.out;
  // Counts are int64: JSON strings in the proto's JSON form.
  auto count = [](const Json& group, const char* key) {
    const Json& v = group.contains(key) ? group[key] : Json(0);
    return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>();
  };
  for (const Json& e : r["experiments"]) {
    EXPECT_EQ(count(e["total"], "trajectories"), 1) << e.dump();
    EXPECT_EQ(count(e["total"], "evaluations"), 1) << e.dump();
    if (gpu) EXPECT_EQ(count(e["total"], "correct"), 1) << e.dump();
  }
  // The agent's three model calls (write, evaluate, finish) counted as calls.
  EXPECT_EQ(count(r["experiments"][0]["total"], "model_calls"), 3) << json.out;
  EXPECT_EQ(count(r["experiments"][1]["total"], "model_calls"), 1) << json.out;
  std::cout << report.out;  // for the record of the run
  // The HTML page of both, in Chromium where it is: every plot shows, the
  // console stays silent.
  const std::string html_path = c.dir() + "/report.html";
  ASSERT_EQ(c.Cli({"report", "agent", "multiturn", "--html", html_path}).exit_code, 0);
  absl::StatusOr<std::string> html = ReadFile(html_path);
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find(">agent<"), std::string::npos);
  EXPECT_NE(html->find(">multiturn<"), std::string::npos);
  const std::string chromium = report::testing::FindChromium();
  if (chromium.empty()) {
    std::cout << "chromium is not installed: the report's page is not checked in a browser\n";
  } else {
    report::testing::ChromiumOptions options;
    options.binary = chromium;
    options.work_dir = c.dir() + "/chromium";
    fs::create_directories(options.work_dir);
    absl::StatusOr<report::testing::PlotProbe> probe = report::testing::ProbePlots(*html, options);
    ASSERT_TRUE(probe.ok()) << probe.status();
    EXPECT_TRUE(probe->probe_logged) << probe->page.log;
    EXPECT_TRUE(probe->other_console.empty()) << probe->other_console.front();
    EXPECT_FALSE(probe->plot_sizes.empty());
    EXPECT_TRUE(report::testing::UnsizedPlots(*probe).empty()) << probe->plots;
  }
  // The session's record, in PTXBench's export format.
  const std::string exported = c.dir() + "/export";
  const CommandResult ex =
      c.Cli({"export", "agent", "--format", "ptxbench", "--out", exported}, true);
  ASSERT_EQ(ex.exit_code, 0) << ex.out;
  EXPECT_EQ(ReadFile(exported + "/agent/exp_000/workspace/kernel.cu").value_or(""), *kernel);
  EXPECT_NE(ReadFile(exported + "/agent/exp_000/model_calls.jsonl").value_or("").find("pinned-model"),
            std::string::npos);
  // And by `show`.
  const CommandResult show = c.Cli({"show", c.QueryText("SELECT id FROM trajectories ORDER BY rowid LIMIT 1")});
  EXPECT_NE(show.out.find("AGENT_FINISHED"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("model_calls.jsonl"), std::string::npos) << show.out;
}

// A Fixit derive stage in agent mode: the base's compile errors, each
// repaired in a Codex session whose workspace starts with the broken kernel
// and its log (starter fixit); the sessions' kernels are evaluated and the
// pairs stage pairs each wrong kernel with its fix. Codex writes with its
// shell, in the workspace it starts in, whatever its task's id.
TEST(AgentPipelineTest, ADeriveStageInAgentModeRepairsFromTheBrokenKernels) {
  const agents::AgentCli* cli = agents::FindAgentCli("codex");
  if (!fs::exists(fs::path(DataDir()) / "third_party/agent-clis/node_modules" / cli->executable)) {
    GTEST_SKIP() << "codex is not installed (scripts/setup.sh installs it)";
  }
  if (!fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no nvcc: nothing evaluates";
  if (geteuid() != 0) GTEST_SKIP() << "a session's sandbox runs it as its own uid: needs root";
  absl::StatusOr<std::string> kernel = ReadFile(DataDir() + "/worker/testdata/gemm/correct.cu");
  ASSERT_TRUE(kernel.ok());
  const std::string examples = DataDir() + "/examples/pipelines";
  Cluster c("e2e_agent_pipeline");
  ScriptedModel model(
      cli->wire,
      {{"exec_command", {{"cmd", "cat kernel.cu error.log"}}},
       {"exec_command", {{"cmd", absl::StrCat("printf %s '", absl::Base64Escape(*kernel),
                                              "' | base64 -d > kernel.cu")}}},
       {"evaluate_kernel", Json::object(), "", "mcp__ptxbench"}});
  ASSERT_GT(model.port(), 0);
  const std::string agent_models = c.WriteFile(
      "models.json",
      Json{{"models",
            {{"scripted-agent",
              {{"provider", std::string(agents::WireProvider(cli->wire))},
               {"base_url", absl::StrCat("http://127.0.0.1:", model.port(), "/v1")},
               {"model_id", "pinned-model"}}}}}}
          .dump());
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.AddRealWorker({"--slots", "2"});
  c.AddRealGateway({"--models", examples + "/models.json"});
  c.AddRealGateway({"--models", agent_models, "--agent-slots", "2", "--name", "agents",
                    "--agent-dir", c.dir() + "/sessions"});
  const std::string base = c.Submit(examples + "/base.json", {"--eval", "compile-only"});
  ASSERT_FALSE(base.empty()) << c.SchedulerLogTail();
  ASSERT_TRUE(c.WaitFinished(base, 240).is_object());
  const std::string pipeline = c.WriteFile(
      "fixit-agent.json",
      Json{{"name", "fixit-agent"},
           {"stages",
            {{{"name", "failed"}, {"kind", "select"}, {"experiments", {"pipeline-base"}},
              {"rows", "failed"}, {"per_definition_cap", 2}},
             {{"name", "repairs"}, {"kind", "derive"}, {"from", "failed"},
              {"model", "scripted-agent"}, {"prompt_tag", "ptxb-no-hint"},
              {"agent", {{"cli", cli->name}, {"cli_version", cli->version},
                         {"token_budget", 100000}, {"max_evaluations", 3},
                         {"stall_timeout", "60s"}}}},
             {{"name", "pairs"}, {"kind", "pairs"}, {"from", "repairs"},
              {"accept_compiled", "yes"}}}}}
          .dump());
  const std::string dir = c.dir() + "/stages";
  const CommandResult run = c.Cli({"pipeline", "run", pipeline, "--dir", dir, "--wait"}, true);
  ASSERT_EQ(run.exit_code, 0) << run.out << Tail(c.dir() + "/gateway2.log");

  // Two sessions, each of a fix-it item, started from its kernel.
  const std::string derived = "(SELECT rowid FROM experiments WHERE agent_json LIKE '%\"starter\":\"fixit\"%')";
  EXPECT_EQ(c.QueryInt(absl::StrCat("SELECT count(*) FROM trajectories WHERE experiment = ",
                                    derived, " AND starter_blob != ''")),
            2);
  EXPECT_EQ(c.QueryInt(absl::StrCat("SELECT count(*) FROM turns t JOIN trajectories j ON "
                                    "j.rowid = t.trajectory WHERE j.experiment = ", derived,
                                    " AND t.action_id IS NOT NULL AND t.eval_status = 10")),
            2)
      << "each session's fix, evaluated (COMPILED)";
  int saw_broken = 0;
  for (const Json& request : model.requests()) {
    for (const Json& result : model.ToolResults(request)) {
      saw_broken += result.dump().find("__float2bf16") != std::string::npos &&
                    result.dump().find("error") != std::string::npos;
    }
  }
  EXPECT_GT(saw_broken, 0) << "the session read the broken kernel and its log";
  CommandResult status = c.Cli({"pipeline", "status", pipeline, "--dir", dir, "--output", "json"});
  ASSERT_EQ(status.exit_code, 0) << status.out;
  const Json stages = Json::parse(status.out)["stages"];
  EXPECT_EQ(stages[2]["manifest"]["counts"]["repaired"], 2) << stages[2].dump();
}

INSTANTIATE_TEST_SUITE_P(PinnedClis, AgentEndToEndTest,
                         ::testing::Values("claude-code", "codex", "gemini-cli"), CliTestName);

}  // namespace
}  // namespace ptxbench::testing
