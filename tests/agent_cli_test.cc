// Real agent CLIs, offline, driving ptxbench's evaluate tool: each pinned
// CLI runs a scripted session (write a kernel, evaluate it through the MCP
// tool, read the feedback, finish) against a scripted model on loopback, in
// the model API that CLI speaks, and a stand-in for the gateway's evaluate
// socket. Each skips, saying so, where scripts/setup.sh has not installed
// its CLI (third_party/agent-clis).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <sstream>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent_gateway/agent/model_proxy.h"
#include "agents/clis.h"
#include "agents/launch.h"
#include "common/hash.h"
#include "sandbox/command.h"
#include "sandbox/view.h"
#include "testing/eval_socket_stub.h"
#include "testing/loopback_canary.h"
#include "testing/pinned_clis.h"
#include "testing/scripted_model.h"

namespace ptxbench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;
using Step = testing::ScriptedModel::Step;

constexpr char kKernel[] = "__global__ void scripted_kernel() {}\n";
constexpr char kFeedback[] = "Evaluation FAILED:\nscripted feedback for the agent";
constexpr char kWorkload[] = R"({"definition": "gemm_n7168_k5120"})";
constexpr char kPrompt[] = "Write the kernel, then evaluate it.";

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The major version of the node on PATH; 0 when there is none.
int NodeMajor() {
  FILE* p = popen("node --version 2>/dev/null", "r");
  if (p == nullptr) return 0;
  int major = 0;
  if (fscanf(p, "v%d", &major) != 1) major = 0;
  pclose(p);
  return major;
}

// A word for sh, single-quoted.
std::string Quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class AgentCliTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cli_ = agents::FindAgentCli(GetParam());
    ASSERT_NE(cli_, nullptr);
    program_ = fs::path(PTXB_AGENT_CLIS_DIR) / cli_->executable;
    if (!fs::exists(program_)) {
      GTEST_SKIP() << cli_->name << " is not installed under " << PTXB_AGENT_CLIS_DIR
                   << " (scripts/setup.sh installs the pinned CLIs with npm ci)";
    }
    if (cli_->needs_node && NodeMajor() < 20) {
      GTEST_SKIP() << cli_->name << " needs Node 20 or newer; this machine's node is "
                   << (NodeMajor() > 0 ? absl::StrCat("version ", NodeMajor()) : "missing");
    }
    // Short: the evaluate socket's path must fit a sockaddr_un.
    dir_ = fs::temp_directory_path() / absl::StrCat("ptxb-agent-", getpid(), "-", cli_->name);
    fs::remove_all(dir_);
    for (const char* sub : {"workspace", "home", "opt"}) fs::create_directories(dir_ / sub);
    std::ofstream(dir_ / "opt/workload.json") << kWorkload;
    std::ofstream(dir_ / "opt/tool.json")
        << Json{{"socket", (dir_ / "eval.sock").string()},
                {"kernel", Kernel()},
                {"workload", (dir_ / "opt/workload.json").string()}}
               .dump();
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string Kernel() const { return (dir_ / "workspace/kernel.cu").string(); }
  std::string Home() const { return (dir_ / "home").string(); }
  // The MCP server entry every CLI's configuration names.
  Json McpServer() const {
    return {{"command", PTXB_AGENT_TOOL_BIN},
            {"args", {"mcp"}},
            {"env", {{"PTXBENCH_AGENT_TOOL_CONFIG", (dir_ / "opt/tool.json").string()}}}};
  }

  // The CLI set up as a session runs it (agents/launch.h).
  agents::Launch LaunchFor(int port) {
    agents::LaunchOptions o;
    o.cli = cli_;
    o.program = program_.string();
    o.tool_binary = PTXB_AGENT_TOOL_BIN;
    o.workspace = (dir_ / "workspace").string();
    o.home = Home();
    o.tool_config = (dir_ / "opt/tool.json").string();
    o.model_port = port;
    o.model = cli_->name == "codex"        ? "gpt-5.6-sol"
              : cli_->name == "gemini-cli" ? "gemini-2.5-pro"
                                           : "claude-sonnet-4-5";
    o.prompt = kPrompt;
    absl::StatusOr<agents::Launch> launch = agents::PrepareLaunch(o);
    EXPECT_TRUE(launch.ok()) << launch.status();
    return launch.ok() ? *launch : agents::Launch();
  }

  // The model's script: write the kernel with the CLI's own file or shell
  // tool, then call the evaluate tool under the CLI's name for MCP tools.
  std::vector<Step> Steps(const std::string& probe = "") const {
    std::vector<Step> steps;
    if (!probe.empty()) {
      const bool codex = cli_->name == "codex", gemini = cli_->name == "gemini-cli";
      steps.push_back({codex ? "exec_command" : gemini ? "run_shell_command" : "Bash",
                       {{codex ? "cmd" : "command", probe}}});
    }
    for (Step& s : WriteAndEvaluate()) steps.push_back(std::move(s));
    return steps;
  }
  std::vector<Step> WriteAndEvaluate() const {
    if (cli_->name == "codex") {
      return {{"exec_command",
               {{"cmd", "printf '__global__ void scripted_kernel() {}\\n' > kernel.cu"}}},
              {"evaluate_kernel", Json::object(), "", "mcp__ptxbench"}};
    }
    const bool gemini = cli_->name == "gemini-cli";
    return {{gemini ? "write_file" : "Write", {{"file_path", Kernel()}, {"content", kKernel}}},
            {gemini ? "mcp_ptxbench_evaluate_kernel" : "mcp__ptxbench__evaluate_kernel"}};
  }

  // Runs `session` in the workspace with exactly its environment; the
  // exit code. Its events go to events.jsonl.
  int Run(const agents::Launch& session) {
    std::string cmd = absl::StrCat("cd ", (dir_ / "workspace").string(), " && env -i");
    for (const std::string& e : session.env) absl::StrAppend(&cmd, " ", Quoted(e));
    absl::StrAppend(&cmd, " timeout 120");
    for (const std::string& a : session.argv) absl::StrAppend(&cmd, " ", Quoted(a));
    absl::StrAppend(&cmd, " < /dev/null > ", (dir_ / "events.jsonl").string(), " 2> ",
                    (dir_ / "stderr.txt").string());
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  const agents::AgentCli* cli_ = nullptr;
  fs::path program_;
  fs::path dir_;
};

TEST_P(AgentCliTest, WritesEvaluatesAndReadsTheFeedback) {
  testing::EvalSocketStub gateway((dir_ / "eval.sock").string(), {1, kFeedback});
  ASSERT_TRUE(gateway.listening());
  testing::ScriptedModel model(cli_->wire, Steps());
  ASSERT_GT(model.port(), 0);
  const agents::Launch session = LaunchFor(model.port());
  ASSERT_EQ(Run(session), 0) << ReadAll(dir_ / "stderr.txt");

  // The kernel the model wrote is the one evaluated, bound to the workload.
  EXPECT_EQ(ReadAll(Kernel()), kKernel);
  const std::vector<agent_tool::EvalRequest> evaluations = gateway.requests();
  ASSERT_EQ(evaluations.size(), 1u);
  EXPECT_EQ(evaluations[0].source, kKernel);
  EXPECT_EQ(evaluations[0].workload_sha256, Sha256Hex(kWorkload));
  // The feedback reached the model as the tool's result.
  const std::vector<Json> requests = model.requests();
  ASSERT_GE(requests.size(), 3u);
  const std::vector<Json> results = model.ToolResults(requests.back());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_THAT(results[1].dump(), HasSubstr("scripted feedback for the agent"));
  // The session ended on its own.
  EXPECT_THAT(ReadAll(dir_ / "events.jsonl"), HasSubstr(session.end_event));
}

// The same session inside a sandbox whose network is its own loopback
// (sandbox/policy.h Policy::loopback): the CLI reaches its model only
// through the relay and the gateway's model proxy on a unix socket, and
// nothing else on the host. The proxy holds the real key and pins the model.
TEST_P(AgentCliTest, InItsSandboxOnlyTheModelSocketIsReachable) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (the session's own uid)";
  setenv("PTXB_HOST_SECRET", "sk-host-canary-0123", 1);
  absl::Cleanup unset = [] { unsetenv("PTXB_HOST_SECRET"); };
  testing::EvalSocketStub gateway((dir_ / "eval.sock").string(), {1, kFeedback});
  ASSERT_TRUE(gateway.listening());
  testing::LoopbackCanary canary;
  const std::string probe = absl::StrCat(
      "cat /proc/self/environ | tr '\\0' '\\n'; cat /proc/net/dev | cut -d: -f1;"
      " python3 -c \"import socket; socket.create_connection(('127.0.0.1', ", canary.port(),
      "), 2)\" 2>&1 | tail -1");
  testing::ScriptedModel model(cli_->wire, Steps(probe));
  ASSERT_GT(model.port(), 0);
  agent_gateway::ModelProxy::Upstream upstream;
  upstream.wire = cli_->wire;
  upstream.base_url = absl::StrCat("http://127.0.0.1:", model.port(),
                                   cli_->wire == agents::Wire::kGeminiGenerate ? "/v1beta"
                                   : cli_->wire == agents::Wire::kOpenAIResponses ? "/v1"
                                                                                  : "");
  upstream.key_headers = {"x-upstream-key: sk-real-key-0123"};
  upstream.model_id = "pinned-model";
  upstream.price.input_per_mtok = 1.0;
  agent_gateway::ModelProxy proxy(upstream, {/*tokens=*/1'000'000});
  ASSERT_TRUE(proxy.Listen((dir_ / "model.sock").string()));
  const agents::Launch session = LaunchFor(model.port());
  // The session's uid owns its directories and may connect to its sockets.
  for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
    (void)!chown(entry.path().c_str(), 65534, 65534);
  }
  (void)!chown(dir_.c_str(), 65534, 65534);

  sandbox::ViewBuilder view;
  // The session's /tmp is its own; what the view binds under the host's /tmp
  // (this test's directory; a checkout under /tmp) goes on top of it.
  view.Add({sandbox::Mount::Kind::kTmpfs, "", "/tmp"});
  for (const char* path : {"/usr", "/bin", "/lib", "/lib64", "/etc"}) {
    view.AddHostPath(path, sandbox::Mount::Kind::kReadOnly);
  }
  view.AddHostPath("/dev/urandom", sandbox::Mount::Kind::kDevice);
  view.AddHostPath(PTXB_AGENT_CLIS_DIR, sandbox::Mount::Kind::kReadOnly);
  view.AddHostPath(fs::path(PTXB_AGENT_TOOL_BIN).parent_path().string(),
                   sandbox::Mount::Kind::kReadOnly);
  view.AddHostPath(dir_.string(), sandbox::Mount::Kind::kReadWrite);
  sandbox::CommandOptions o;
  o.policy.mounts = view.mounts();
  o.policy.loopback = true;
  o.policy.cwd = (dir_ / "workspace").string();
  o.policy.env = session.env;
  o.argv = {"/bin/sh", "-c",
            absl::StrCat(PTXB_AGENT_TOOL_BIN, " relay ", model.port(), " ",
                         (dir_ / "model.sock").string(),
                         " > /dev/null && exec \"$@\" < /dev/null"),
            "session"};
  o.argv.insert(o.argv.end(), session.argv.begin(), session.argv.end());
  o.deadline = absl::Seconds(120);
  absl::StatusOr<sandbox::CommandResult> r = sandbox::RunCommand(o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->ok()) << r->outcome.setup_error << "\n" << r->output.substr(0, 4000);

  // The session ran: its kernel evaluated, its feedback back to the model.
  const std::vector<agent_tool::EvalRequest> evaluations = gateway.requests();
  ASSERT_EQ(evaluations.size(), 1u);
  EXPECT_EQ(evaluations[0].source, kKernel);
  const std::vector<Json> requests = model.requests();
  ASSERT_GE(requests.size(), 4u);
  const std::vector<Json> results = model.ToolResults(requests.back());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_THAT(results[2].dump(), HasSubstr("scripted feedback for the agent"));
  // What the agent's shell saw: only lo, only its own environment, and no
  // way to the host's loopback.
  const std::string seen = results[0].dump();
  EXPECT_THAT(seen, HasSubstr("Connection refused"));
  EXPECT_THAT(seen, ::testing::Not(HasSubstr("sk-host-canary")));
  EXPECT_THAT(seen, ::testing::Not(HasSubstr("eth")));
  EXPECT_THAT(seen, HasSubstr("lo"));
  EXPECT_FALSE(canary.Contacted());
  // Every model call went through the proxy: the real key added upstream,
  // the session's placeholder never forwarded, the model pinned, and the
  // tokens counted from the provider's own usage.
  for (const std::string& headers : model.headers()) {
    EXPECT_THAT(headers, HasSubstr("x-upstream-key: sk-real-key-0123"));
    EXPECT_THAT(headers, ::testing::Not(HasSubstr(agents::kSessionKey)));
  }
  for (const Json& request : requests) {
    if (request.contains("model")) EXPECT_EQ(request["model"], "pinned-model");
  }
  for (const std::string& path : model.paths()) {
    if (cli_->wire == agents::Wire::kGeminiGenerate) EXPECT_THAT(path, HasSubstr("pinned-model"));
  }
  const ptxbench::v1::AgentUsage totals = proxy.totals();
  EXPECT_EQ(totals.model_calls(), static_cast<int>(requests.size()));
  EXPECT_EQ(totals.usage().input_tokens(),
            totals.model_calls() * testing::ScriptedModel::kInputTokens);
  EXPECT_EQ(totals.usage().output_tokens(),
            totals.model_calls() * testing::ScriptedModel::kOutputTokens);
  for (const agent_gateway::ModelProxy::Call& call : proxy.calls()) {
    EXPECT_EQ(call.refused, "") << call.target;
  }
}

INSTANTIATE_TEST_SUITE_P(PinnedClis, AgentCliTest,
                         ::testing::Values("claude-code", "codex", "gemini-cli"),
                         testing::CliTestName);

}  // namespace
}  // namespace ptxbench
