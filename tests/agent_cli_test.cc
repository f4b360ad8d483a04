// Real agent CLIs, offline, driving ptxbench's evaluate tool: each pinned
// CLI runs a scripted session (write a kernel, evaluate it through the MCP
// tool, read the feedback, finish) against a scripted model on loopback and
// a stand-in for the gateway's evaluate socket. Skipped, saying so, where
// scripts/setup.sh has not installed the CLIs (third_party/agent-clis).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "agents/clis.h"
#include "common/hash.h"
#include "testing/eval_socket_stub.h"
#include "testing/scripted_anthropic.h"

namespace ptxbench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kKernel[] = "__global__ void scripted_kernel() {}\n";
constexpr char kFeedback[] = "Evaluation FAILED:\nscripted feedback for the agent";
constexpr char kWorkload[] = R"({"definition": "gemm_n7168_k5120"})";

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class AgentCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short: the evaluate socket's path must fit a sockaddr_un.
    dir_ = fs::temp_directory_path() / absl::StrCat("ptxb-agent-", getpid());
    fs::remove_all(dir_);
    for (const char* sub : {"workspace", "home", "opt"}) fs::create_directories(dir_ / sub);
    std::ofstream(dir_ / "opt/workload.json") << kWorkload;
    std::ofstream(dir_ / "opt/tool.json")
        << Json{{"socket", (dir_ / "eval.sock").string()},
                {"kernel", (dir_ / "workspace/kernel.cu").string()},
                {"workload", (dir_ / "opt/workload.json").string()}}
               .dump();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The CLI's program, or empty when it is not installed.
  static std::string Installed(const std::string& name) {
    const agents::AgentCli* cli = agents::FindAgentCli(name);
    const fs::path path = fs::path(PTXB_AGENT_CLIS_DIR) / cli->executable;
    return fs::exists(path) ? path.string() : "";
  }

  // Runs `argv` in the workspace with exactly `env`; its exit code. The
  // events it prints go to events.jsonl.
  int RunCli(const std::string& env, const std::string& argv) {
    const std::string cmd = absl::StrCat(
        "cd ", (dir_ / "workspace").string(), " && env -i ", env, " timeout 120 ", argv,
        " < /dev/null > ", (dir_ / "events.jsonl").string(), " 2> ",
        (dir_ / "stderr.txt").string());
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path dir_;
};

TEST_F(AgentCliTest, ClaudeCodeWritesEvaluatesAndReadsTheFeedback) {
  const std::string claude = Installed("claude-code");
  if (claude.empty()) {
    GTEST_SKIP() << "Claude Code is not installed under " << PTXB_AGENT_CLIS_DIR
                 << " (scripts/setup.sh installs the pinned CLIs with npm ci)";
  }
  testing::EvalSocketStub gateway((dir_ / "eval.sock").string(), {1, kFeedback});
  ASSERT_TRUE(gateway.listening());
  testing::ScriptedAnthropic model({
      {"Write", {{"file_path", (dir_ / "workspace/kernel.cu").string()}, {"content", kKernel}}, ""},
      {"mcp__ptxbench__evaluate_kernel", Json::object(), ""},
  });
  ASSERT_GT(model.port(), 0);
  std::ofstream(dir_ / "mcp.json")
      << Json{{"mcpServers",
               {{"ptxbench",
                 {{"type", "stdio"},
                  {"command", PTXB_AGENT_TOOL_BIN},
                  {"args", {"mcp"}},
                  {"env", {{"PTXBENCH_AGENT_TOOL_CONFIG", (dir_ / "opt/tool.json").string()}}},
                  {"timeout", 960000}}}}}}
             .dump();
  const std::string env = absl::StrCat(
      "PATH=/usr/bin:/bin HOME=", (dir_ / "home").string(),
      " ANTHROPIC_BASE_URL=http://127.0.0.1:", model.port(),
      " ANTHROPIC_API_KEY=session-token CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"
      " DISABLE_AUTOUPDATER=1 MCP_TOOL_TIMEOUT=960000");
  const int code = RunCli(
      env, absl::StrCat(claude,
                        " -p 'Write the kernel, then evaluate it.' --output-format stream-json"
                        " --verbose --model claude-sonnet-4-5 --mcp-config ",
                        (dir_ / "mcp.json").string(),
                        " --strict-mcp-config --allowedTools"
                        " 'Read,Write,Edit,Bash,mcp__ptxbench__evaluate_kernel,"
                        "mcp__ptxbench__budget_status' --permission-mode dontAsk"));
  ASSERT_EQ(code, 0) << ReadAll(dir_ / "stderr.txt");

  // The kernel the model wrote is the one evaluated, bound to the workload.
  EXPECT_EQ(ReadAll(dir_ / "workspace/kernel.cu"), kKernel);
  const std::vector<agent_tool::EvalRequest> evaluations = gateway.requests();
  ASSERT_EQ(evaluations.size(), 1u);
  EXPECT_EQ(evaluations[0].source, kKernel);
  EXPECT_EQ(evaluations[0].workload_sha256, Sha256Hex(kWorkload));
  // The feedback reached the model as the tool's result.
  const std::vector<Json> requests = model.requests();
  ASSERT_GE(requests.size(), 3u);
  const std::vector<Json> results = testing::ToolResults(requests.back());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_THAT(results[1].dump(), HasSubstr("scripted feedback for the agent"));
  // The session ended on its own, with its result event.
  EXPECT_THAT(ReadAll(dir_ / "events.jsonl"), HasSubstr("\"type\":\"result\""));
}

}  // namespace
}  // namespace ptxbench
