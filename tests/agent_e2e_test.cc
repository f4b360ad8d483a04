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

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "agents/clis.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "testing/pinned_clis.h"
#include "testing/require_gpu.h"
#include "testing/scripted_model.h"
#include "tests/cluster.h"

namespace ptxbench::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class AgentEndToEndTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cli_ = agents::FindAgentCli(GetParam());
    ASSERT_NE(cli_, nullptr);
    if (!fs::exists(fs::path(DataDir()) / "third_party/agent-clis/node_modules" /
                    cli_->executable)) {
      GTEST_SKIP() << cli_->name << " is not installed (scripts/setup.sh installs it)";
    }
    if (!fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no nvcc: nothing evaluates";
    if (geteuid() != 0) GTEST_SKIP() << "a session's sandbox runs it as its own uid: needs root";
    gpu_ = NoGpuReason().empty();
  }

  // Write the kernel with the CLI's own tool, evaluate it, finish. The
  // session of the experiment's only task (tk_1) works in `workspace`.
  std::vector<ScriptedModel::Step> Steps(const std::string& kernel,
                                         const std::string& workspace) const {
    if (cli_->name == "codex") {
      return {{"exec_command",
               {{"cmd", absl::StrCat("printf %s '", absl::Base64Escape(kernel),
                                     "' | base64 -d > kernel.cu")}}},
              {"evaluate_kernel", Json::object(), "", "mcp__ptxbench"}};
    }
    const bool gemini = cli_->name == "gemini-cli";
    return {{gemini ? "write_file" : "Write", {{"file_path", workspace + "/kernel.cu"}, {"content", kernel}}},
            {gemini ? "mcp_ptxbench_evaluate_kernel" : "mcp__ptxbench__evaluate_kernel"}};
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
  const std::string suffix = cli_->wire == agents::Wire::kGeminiGenerate    ? "/v1beta"
                             : cli_->wire == agents::Wire::kOpenAIResponses ? "/v1"
                                                                            : "";
  const std::string models = c.WriteFile(
      "models.json",
      Json{{"models",
            {{"scripted-agent",
              {{"provider", std::string(agents::WireProvider(cli_->wire))},
               {"base_url", absl::StrCat("http://127.0.0.1:", model.port(), suffix)},
               {"model_id", "pinned-model"},
               {"price", {{"input_per_mtok", 1.0}, {"output_per_mtok", 4.0}}}}}}}}
          .dump());
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

INSTANTIATE_TEST_SUITE_P(PinnedClis, AgentEndToEndTest,
                         ::testing::Values("claude-code", "codex", "gemini-cli"), CliTestName);

}  // namespace
}  // namespace ptxbench::testing
