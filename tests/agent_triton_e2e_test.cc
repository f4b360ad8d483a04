// An agent-mode Triton session per pinned CLI, through the real scheduler and
// an agent gateway, against a scripted model: the model writes kernel.py (the
// bundled Triton example's fixed GEMM, examples/quickstart_triton) with the
// CLI's own tool and calls the evaluate tool; a simulated worker, which
// counts as one that runs Triton, evaluates it; the feedback goes back to the
// model as the tool's result, and the session ends with the kernel recorded
// as a Triton turn. Skips, saying so, where the CLI is not installed or the
// test does not run as root (the session's sandbox needs its own uid).

#include <gtest/gtest.h>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agents/clis.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "ptxbench/v1/common.pb.h"
#include "scheduler/feedback/extract.h"
#include "testing/child_process.h"
#include "testing/pinned_clis.h"
#include "testing/scripted_model.h"
#include "tests/cluster.h"
#include "tests/testing/agent_steps.h"
#include "tests/testing/simulated_outcome.h"

namespace ptxbench::testing {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = nlohmann::json;

class AgentTritonTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cli_ = agents::FindAgentCli(GetParam());
    ASSERT_NE(cli_, nullptr);
    if (const std::string why = WhyNoSession(*cli_); !why.empty()) GTEST_SKIP() << why;
  }

  const agents::AgentCli* cli_ = nullptr;
};

// Waits until the executor named `name` is active.
bool Active(const Cluster& c, const std::string& name) {
  for (int i = 0; i < 150; ++i) {
    const Json workers =
        Json::parse(c.Cli({"workers", "--output", "json"}).out, nullptr, /*allow_exceptions=*/false);
    if (workers.is_object()) {
      for (const Json& e : workers.value("executors", Json::array())) {
        if (e.value("name", "") == name && e.value("status", "") == "active") return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST_P(AgentTritonTest, ASessionWritesKernelPyAndEndsWithTheEvaluatedKernel) {
  const absl::StatusOr<std::string> answer = ReadFile(
      DataDir() + "/examples/quickstart_triton/answers/gemm_n7168_k5120/turn1.md");
  ASSERT_TRUE(answer.ok()) << answer.status();
  const std::optional<std::string> kernel = scheduler::ExtractKernel(*answer, "triton");
  ASSERT_TRUE(kernel.has_value());
  // A worker under which the kernel passes: the session ends with a correct one.
  const uint64_t seed = SeedFor({{*kernel, v1::PASSED}});
  ASSERT_NE(seed, 0u);

  Cluster c(absl::StrCat("e2e_agent_triton_", cli_->name));
  // Write kernel.py with the CLI's own tool, evaluate it, finish.
  ScriptedModel model(cli_->wire, WriteAndEvaluate(*cli_, c.dir() + "/sessions/tk_1-1/workspace",
                                                   "kernel.py", *kernel));
  ASSERT_GT(model.port(), 0);
  const std::string models = c.WriteFile(
      "models.json",
      Json{{"models", {{"scripted-agent", ScriptedAgentModel(*cli_, model.port())}}}}.dump());
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.AddWorker({"--latency-ms", "5", "--seed", absl::StrCat(seed), "--name", "simulated"});
  c.AddRealGateway({"--models", models, "--agent-slots", "1", "--name", "agents", "--agent-dir",
                    c.dir() + "/sessions"});
  ASSERT_TRUE(Active(c, "simulated"));
  ASSERT_TRUE(Active(c, "agents")) << Tail(c.dir() + "/gateway1.log");
  const std::string spec = c.WriteFile(
      "spec.json",
      Json{{"name", "agent-triton"},
           {"models", {"scripted-agent"}},
           {"definitions", {"gemm_n7168_k5120"}},
           {"language", "triton"},
           {"prompt_tags", {"ptxb-triton"}},
           {"samples", 1},
           {"target_speedup", 0.001},
           {"mode", "agent"},
           {"agent", {{"cli", cli_->name}, {"cli_version", cli_->version},
                      {"token_budget", 100000}, {"stall_timeout", "60s"}}}}
          .dump());
  const std::string exp = c.Submit(spec);
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  const Json status = c.WaitFinished(exp, 120);
  ASSERT_EQ(status["trajectories"]["terminal"], 1) << status.dump() << c.SchedulerLogTail();

  // One turn: the session's kernel.py, evaluated by the simulated worker.
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM experiments WHERE language = 'triton'"), 1);
  ASSERT_EQ(c.QueryInt("SELECT count(*) FROM turns WHERE action_id IS NOT NULL"), 1);
  EXPECT_EQ(c.QueryText("SELECT kernel_sha256 FROM turns"), Sha256Hex(*kernel));
  EXPECT_EQ(c.QueryInt("SELECT eval_status FROM turns"), v1::PASSED);
  EXPECT_EQ(c.QueryInt("SELECT state FROM trajectories"), v1::SUBMITTED);
  {
    auto db = c.OpenDatabase();
    auto s = db->Prepare("SELECT agent_outcome FROM trajectories");
    ASSERT_TRUE(s.ok() && *s->Step());
    v1::AgentOutcome outcome;
    ASSERT_TRUE(outcome.ParseFromString(s->ColumnBlob(0)));
    EXPECT_EQ(outcome.end(), v1::AGENT_FINISHED) << outcome.reason();
    std::set<std::string> names;
    for (const v1::AgentRecord& r : outcome.records()) names.insert(r.name());
    EXPECT_TRUE(names.count("workspace/kernel.py")) << outcome.DebugString();
  }
  // The worker's verdict went back to the model as the tool's result.
  const std::vector<Json> requests = model.requests();
  ASSERT_FALSE(requests.empty());
  const std::vector<Json> results = model.ToolResults(requests.back());
  ASSERT_FALSE(results.empty());
  EXPECT_NE(results.back().dump().find("PASSED"), std::string::npos) << results.back().dump();
}

INSTANTIATE_TEST_SUITE_P(PinnedClis, AgentTritonTest,
                         ::testing::Values("claude-code", "codex", "gemini-cli"), CliTestName);

}  // namespace
}  // namespace ptxbench::testing
