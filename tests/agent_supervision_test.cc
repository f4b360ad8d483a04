// A session outlives nothing (docs/AGENTS.md, "Supervision"), checked with
// the real scheduler and the real ptxbench-gateway binary running Claude
// Code against a scripted model: the attack of issue 47, a detached process
// of the agent's that stops every other process of its session (the CLI
// included) and stays, then the gateway killed with kill -9. Within 5 s no
// process of the session runs and its tmpfs is mounted nowhere; a gateway
// started again on the same directory removes what an earlier one left and
// kills what still ran as its uids; a second gateway on the same directory
// refuses to start. Skips, saying so, without root or Claude Code.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agents/clis.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "sandbox/uid_range.h"
#include "testing/scripted_model.h"
#include "tests/cluster.h"

namespace ptxbench::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// The pids whose real uid is `uid`, each with its state letter.
std::vector<std::pair<pid_t, char>> ProcessesOf(uid_t uid) {
  std::vector<std::pair<pid_t, char>> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(it->path().filename().string(), &pid)) continue;
    const std::string status = ReadFile(absl::StrCat("/proc/", pid, "/status")).value_or("");
    char state = '?';
    bool ours = false;
    for (absl::string_view line : absl::StrSplit(status, '\n')) {
      if (absl::StartsWith(line, "State:\t") && line.size() > 7) state = line[7];
      if (absl::StartsWith(line, "Uid:\t"))
        ours = absl::StartsWith(line, absl::StrCat("Uid:\t", uid, "\t"));
    }
    if (ours && state != 'Z' && state != 'X') out.push_back({pid, state});
  }
  return out;
}

// The pid and real uid of the process with `marker` in its command line.
std::pair<pid_t, uid_t> FindMarked(const std::string& marker) {
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(it->path().filename().string(), &pid)) continue;
    const std::string cmdline = ReadFile(absl::StrCat("/proc/", pid, "/cmdline")).value_or("");
    if (!absl::StrContains(cmdline, marker) || absl::StrContains(cmdline, "setsid")) continue;
    const std::string status = ReadFile(absl::StrCat("/proc/", pid, "/status")).value_or("");
    for (absl::string_view line : absl::StrSplit(status, '\n')) {
      if (!absl::StartsWith(line, "Uid:\t")) continue;
      const std::vector<std::string> ids = absl::StrSplit(line.substr(5), '\t');
      uid_t uid = 0;
      if (!ids.empty() && absl::SimpleAtoi(ids[0], &uid)) return {pid, uid};
    }
  }
  return {0, 0};
}

// Mount points under `dir` in a mountinfo file.
std::vector<std::string> MountsUnder(const std::string& mountinfo, const std::string& dir) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(ReadFile(mountinfo).value_or(""), '\n')) {
    const std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() > 4 && absl::StartsWith(fields[4], dir + "/")) out.push_back(fields[4]);
  }
  return out;
}

class AgentSupervisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cli_ = agents::FindAgentCli("claude-code");
    if (!fs::exists(fs::path(DataDir()) / "third_party/agent-clis/node_modules" /
                    cli_->executable)) {
      GTEST_SKIP() << "claude-code is not installed (scripts/setup.sh installs it)";
    }
    if (geteuid() != 0) {
      GTEST_SKIP() << "sessions of their own uids and a gateway of its own mounts need root";
    }
  }
  const agents::AgentCli* cli_ = nullptr;
};

TEST_F(AgentSupervisionTest, AKilledGatewayLeavesNothingAndARestartedOneCleansUp) {
  Cluster c("agent_supervision");
  // As mountinfo shows it.
  const std::string sessions = fs::path(c.dir() + "/sessions").lexically_normal().string();
  const std::string marker = absl::StrCat("ptxb-detached-", getpid());
  // The agent's one step: a process of its own, detached from the CLI
  // (setsid, in the background, its output nowhere), that stops every other
  // process of the session it may signal, the CLI included, and stays. The
  // tool's command waits meanwhile, so the CLI is still in its turn.
  const std::string attack = absl::StrCat(
      "setsid python3 -c 'import os, signal, time; time.sleep(1); os.kill(-1, signal.SIGSTOP); "
      "time.sleep(3600)' ",
      marker, " > /dev/null 2>&1 < /dev/null & python3 -c 'import time; time.sleep(60)'");
  ScriptedModel model(cli_->wire, {{"Bash", {{"command", attack}}}});
  ASSERT_GT(model.port(), 0);
  const std::string models = c.WriteFile(
      "models.json", Json{{"models",
                           {{"scripted-agent",
                             {{"provider", "anthropic"},
                              {"base_url", absl::StrCat("http://127.0.0.1:", model.port())},
                              {"model_id", "pinned-model"}}}}}}
                         .dump());
  // A block of one uid that no other gateway of the machine holds now.
  uint32_t base = 0;
  {
    absl::StatusOr<sandbox::UidBlock> free = sandbox::UidBlock::ClaimFree(65400, 65534, 1);
    ASSERT_TRUE(free.ok()) << free.status();
    base = free->first();
  }
  const std::vector<std::string> gateway_flags = {"--models",         models,
                                                  "--agent-slots",    "1",
                                                  "--name",           "agents",
                                                  "--agent-dir",      sessions,
                                                  "--agent-uid-base", absl::StrCat(base)};
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  process::Process& gateway = c.AddRealGateway(gateway_flags);
  const std::string spec = c.WriteFile(
      "spec.json",
      Json{{"name", "supervision"},
           {"models", {"scripted-agent"}},
           {"definitions", {"gemm_n7168_k5120"}},
           {"prompt_tags", {"ptxb-no-hint"}},
           {"samples", 1},
           {"target_speedup", 1.0},
           {"eval", "compile-only"},
           {"mode", "agent"},
           {"agent",
            {{"cli", cli_->name}, {"cli_version", cli_->version}, {"token_budget", 100000}}}}
          .dump());
  // Submitted once the gateway has registered its CLIs.
  std::string experiment;
  for (int i = 0; i < 240 && experiment.empty(); ++i) {
    experiment = c.Submit(spec);
    if (experiment.empty()) absl::SleepFor(absl::Milliseconds(500));
  }
  ASSERT_FALSE(experiment.empty()) << Tail(c.dir() + "/gateway0.log");

  // The detached process runs as the session's uid, and has stopped the CLI.
  std::pair<pid_t, uid_t> detached{0, 0};
  for (int i = 0; i < 1200 && detached.first == 0; ++i) {
    detached = FindMarked(marker);
    if (detached.first == 0) absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_NE(detached.first, 0) << "the agent's detached process never ran\n"
                               << Tail(c.dir() + "/gateway0.log");
  const uid_t uid = detached.second;
  EXPECT_EQ(uid, base) << "the session runs as the gateway's uid";
  bool stopped = false;
  for (int i = 0; i < 100 && !stopped; ++i) {
    for (const auto& [pid, state] : ProcessesOf(uid)) stopped |= state == 'T';
    if (!stopped) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(stopped) << "no process of the session was stopped";
  // Its directory is a tmpfs of the gateway's own mount namespace only.
  EXPECT_FALSE(MountsUnder(absl::StrCat("/proc/", gateway.pid(), "/mountinfo"), sessions).empty())
      << "the session's tmpfs is not mounted in the gateway";

  gateway.Signal(SIGKILL);
  gateway.Wait();
  const absl::Time killed = absl::Now();
  while (!ProcessesOf(uid).empty() && absl::Now() - killed < absl::Seconds(5)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  std::string left;
  for (const auto& [pid, state] : ProcessesOf(uid)) {
    absl::StrAppend(&left, pid, " (", std::string(1, state), ") ",
                    ReadFile(absl::StrCat("/proc/", pid, "/cmdline")).value_or(""), "\n");
  }
  EXPECT_TRUE(left.empty()) << "5 s after the gateway's kill -9, its session still runs:\n" << left;
  EXPECT_EQ(MountsUnder("/proc/self/mountinfo", sessions), std::vector<std::string>{})
      << "the session's tmpfs outlived its gateway";
  const std::vector<std::string> named_sessions = [&] {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(sessions, ec), end; !ec && it != end; it.increment(ec)) {
      names.push_back(it->path().filename().string());
    }
    return names;
  }();
  ASSERT_EQ(named_sessions.size(), 1u) << "the killed gateway's session directory";

  // What a gateway of an earlier version left: its session's tmpfs mounted
  // where every process sees it, and a process still running as its uid.
  const std::string old_session = sessions + "/tk_0-1";
  fs::create_directories(old_session);
  ASSERT_EQ(mount("tmpfs", old_session.c_str(), "tmpfs", 0, "size=1m"), 0) << strerror(errno);
  std::ofstream(old_session + "/kernel.cu") << "// left\n";
  const pid_t straggler = fork();
  if (straggler == 0) {
    if (setresgid(base, base, base) != 0 || setresuid(base, base, base) != 0) _exit(2);
    pause();
    _exit(0);
  }
  // Ended on every path: a paused child holds the test's output open.
  bool reaped = false;
  const absl::Cleanup end_straggler = [&] {
    if (!reaped) {
      kill(straggler, SIGKILL);
      waitpid(straggler, nullptr, 0);
    }
  };
  // A gateway started again on the same directory and uids cleans up
  // before it takes a session.
  process::Process& restarted = c.AddRealGateway(gateway_flags);
  const std::string log = c.dir() + "/gateway1.log";
  for (int i = 0; i < 600 && !absl::StrContains(ReadFile(log).value_or(""), "msg=starting "); ++i) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(absl::StrContains(ReadFile(log).value_or(""), "msg=starting ")) << Tail(log);
  int status = 0;
  ASSERT_EQ(waitpid(straggler, &status, 0), straggler);
  reaped = true;
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "a process of the sessions' uids outlived the restart";
  EXPECT_EQ(MountsUnder("/proc/self/mountinfo", sessions), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(old_session));
  EXPECT_FALSE(fs::exists(sessions + "/" + named_sessions[0]))
      << "the killed gateway's session directory was left";
  EXPECT_TRUE(absl::StrContains(ReadFile(log).value_or(""), "removed what an earlier gateway"))
      << Tail(log);

  // A second gateway on the same directory does not start.
  const CommandResult second =
      RunCommand({PTXB_GATEWAY_BIN, "--scheduler", c.address(), "--token-file", c.TokenFile(),
                  "--models", models, "--agent-slots", "1", "--agent-dir", sessions},
                 /*merge_stderr=*/true);
  EXPECT_EQ(second.exit_code, 2) << second.out;
  EXPECT_TRUE(
      absl::StrContains(second.out, "another ptxbench-gateway runs its sessions in " + sessions))
      << second.out;
  // The restarted gateway may have taken the session again (the same attack
  // then runs): its kill takes that with it as well.
  restarted.Signal(SIGKILL);
  restarted.Wait();
  const absl::Time end = absl::Now();
  while (!ProcessesOf(uid).empty() && absl::Now() - end < absl::Seconds(5)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(ProcessesOf(uid).empty());
}

}  // namespace
}  // namespace ptxbench::testing
