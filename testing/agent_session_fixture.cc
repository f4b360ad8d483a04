#include "testing/agent_session_fixture.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/stubs/logging.h"
#include "nlohmann/json.hpp"

namespace ptxbench::testing {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using Json = nlohmann::json;

std::string AgentClisDir() { return PTXB_AGENT_CLIS_DIR; }
std::string AgentToolBinary() { return PTXB_AGENT_TOOL_BIN; }

absl::StatusOr<v1::AgentEvalResponse> FakeScheduler::operator()(const v1::AgentEvalRequest& sent) {
  v1::AgentEvalRequest r;
  google::protobuf::LogSilencer quiet;  // what a string that is not UTF-8 logs
  if (!r.ParseFromString(sent.SerializeAsString())) {
    std::lock_guard<std::mutex> lock(mu_);
    ++unparsed_;
    return absl::InternalError("grpc: error while unmarshalling the request");
  }
  int turn;
  absl::Time ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, added] = turns_.emplace(r.action_id(), static_cast<int>(turns_.size()));
    if (added) {
      requests_.push_back(r);
      ready_.push_back(absl::Now() + (it->second == 0 ? first_delay : absl::ZeroDuration()));
    }
    turn = it->second;
    ready = ready_[turn];
  }
  const absl::Time poll_end = absl::Now() + absl::Milliseconds(r.wait_ms());
  absl::SleepFor(std::max(absl::ZeroDuration(), std::min(ready, poll_end) - absl::Now()));
  v1::AgentEvalResponse out;
  out.set_turn(turn);
  if (block.load() || absl::Now() < ready) return out;
  out.set_done(true);
  out.mutable_result()->set_status(turn == 0 ? v1::COMPILE_ERROR : v1::PASSED);
  out.mutable_result()->set_all_passed(turn > 0);
  out.mutable_result()->set_min_speedup(turn > 0 ? 2.0 : 0);
  if (turn > 0) {  // a correct evaluation has a workload that passed (verdict::Correct)
    v1::WorkloadTrace* trace = out.mutable_result()->add_traces();
    trace->set_status(v1::PASSED);
    trace->set_speedup(2.0);
  }
  out.set_feedback(absl::StrCat("feedback of turn ", turn, " for: ", r.kernel_source()));
  return out;
}

std::vector<v1::AgentEvalRequest> FakeScheduler::requests() {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

int FakeScheduler::unparsed() {
  std::lock_guard<std::mutex> lock(mu_);
  return unparsed_;
}

void AgentSessionFixture::SetUp() {
  cli_ = agents::FindAgentCli(GetParam());
  ASSERT_NE(cli_, nullptr);
  if (!fs::exists(fs::path(AgentClisDir()) / cli_->executable)) {
    GTEST_SKIP() << cli_->name << " is not installed under " << AgentClisDir()
                 << " (scripts/setup.sh installs the pinned CLIs with npm ci)";
  }
  if (geteuid() != 0) GTEST_SKIP() << "a session's sandbox runs it as its own uid: needs root";
  dir_ = fs::temp_directory_path() / absl::StrCat("ptxb-s-", getpid(), "-", cli_->name);
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::all);  // the session's uid walks through it
  setenv("PTXB_SESSION_TEST_KEY", "sk-session-test", 1);
  // Two uids no gateway of this machine runs sessions as (agent_host.h).
  absl::StatusOr<sandbox::UidBlock> block = sandbox::UidBlock::ClaimFree(65100, 65534, 2);
  ASSERT_TRUE(block.ok()) << block.status();
  block_ = std::make_unique<sandbox::UidBlock>(*std::move(block));
  uids_ = std::make_unique<sandbox::UidRange>(block_->first(), block_->count());
}

void AgentSessionFixture::TearDown() {
  if (!dir_.empty()) fs::remove_all(dir_);
}

void AgentSessionFixture::UseModelAt(int port) {
  const std::string suffix = cli_->wire == agents::Wire::kGeminiGenerate    ? "/v1beta"
                             : cli_->wire == agents::Wire::kOpenAIResponses ? "/v1"
                                                                            : "";
  std::ofstream(dir_ / "models.json")
      << Json{{"models",
               {{"scripted-agent-model",
                 {{"provider", std::string(agents::WireProvider(cli_->wire))},
                  {"base_url", absl::StrCat("http://127.0.0.1:", port, suffix)},
                  {"model_id", "pinned-model"},
                  {"api_key_env", "PTXB_SESSION_TEST_KEY"},
                  {"price", {{"input_per_mtok", 1.0}, {"output_per_mtok", 2.0}}}}}}}}
             .dump();
  auto registry = agent_gateway::ModelRegistry::Load({(dir_ / "models.json").string()});
  ASSERT_TRUE(registry.ok()) << registry.status();
  registry_ = *std::move(registry);
}

agent_gateway::SessionOptions AgentSessionFixture::Options(FakeScheduler& scheduler) {
  agent_gateway::SessionOptions o;
  o.clis_dir = AgentClisDir();
  o.tool_binary = AgentToolBinary();
  o.sessions_dir = dir_.string();
  o.registry = registry_.get();
  o.uids = uids_.get();
  o.permits = &permits_;
  o.agent_eval = [&scheduler](const v1::AgentEvalRequest& r) { return scheduler(r); };
  return o;
}

v1::Task AgentSessionFixture::Task(const std::string& task_id, int64_t token_budget) {
  v1::Task t;
  t.set_kind(v1::AGENT);
  t.mutable_lease()->set_task_id(task_id);
  t.mutable_lease()->set_lease_id("ls_1");
  v1::AgentSession* s = t.mutable_agent();
  v1::AgentSettings* a = s->mutable_settings();
  a->set_cli(cli_->name);
  a->set_cli_version(cli_->version);
  a->set_eval_interface("mcp");
  a->set_shell(true);
  a->set_token_budget(token_budget);
  a->set_wall_time_s(600);
  a->set_stall_timeout_s(120);
  a->set_eval_wait_timeout_s(120);
  a->set_budget_grace_s(30);
  a->set_show_budget(true);
  a->set_final_evaluation("none");
  s->set_model("scripted-agent-model");
  s->set_definition("gemm_n7168_k5120");
  s->set_language("cuda");
  s->set_target_speedup(1.5);
  s->set_system_prompt("You write CUDA kernels.");
  s->set_task_prompt("Write a GEMM.");
  s->set_session(1);
  return t;
}

ScriptedModel::Step AgentSessionFixture::Shell(const std::string& command) const {
  const bool codex = cli_->name == "codex", gemini = cli_->name == "gemini-cli";
  return {codex ? "exec_command" : gemini ? "run_shell_command" : "Bash",
          {{codex ? "cmd" : "command", command}}};
}

std::vector<ScriptedModel::Step> AgentSessionFixture::Steps(const std::string& workspace,
                                                            const std::string& probe) const {
  std::vector<ScriptedModel::Step> steps;
  if (!probe.empty()) steps.push_back(Shell(probe));
  for (const char* k : {"// first\n", "// second\n"}) {
    if (cli_->name == "codex") {
      steps.push_back({"exec_command", {{"cmd", absl::StrCat("printf '", k, "' > kernel.cu")}}});
      steps.push_back({"evaluate_kernel", Json::object(), "", "mcp__ptxbench"});
      continue;
    }
    const bool gemini = cli_->name == "gemini-cli";
    steps.push_back({gemini ? "write_file" : "Write",
                     {{"file_path", workspace + "/kernel.cu"}, {"content", k}}});
    steps.push_back(
        {gemini ? "mcp_ptxbench_evaluate_kernel" : "mcp__ptxbench__evaluate_kernel"});
  }
  return steps;
}

int AgentSessionFixture::Survivors() const {
  int n = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    const std::string cwd = fs::read_symlink(entry.path() / "cwd", ec).string();
    // read(2), not a stream: a process may end while it is read (ESRCH).
    std::string cmdline;
    const int fd = open((entry.path() / "cmdline").c_str(), O_RDONLY | O_CLOEXEC);
    char buffer[4096];
    for (ssize_t n; fd >= 0 && (n = read(fd, buffer, sizeof(buffer))) > 0;) {
      cmdline.append(buffer, static_cast<size_t>(n));
    }
    if (fd >= 0) close(fd);
    if (cwd.rfind(dir_.string(), 0) == 0 || cmdline.find(dir_.string()) != std::string::npos) {
      ++n;
    }
  }
  return n;
}

std::string AgentSessionFixture::Workspace(const std::string& task_id) const {
  return (dir_ / absl::StrCat(task_id, "-1") / "workspace").string();
}

}  // namespace ptxbench::testing
