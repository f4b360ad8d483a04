#include "process/run.h"

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::process {
namespace {

using ::testing::HasSubstr;

// Live (non-zombie) processes whose process group is `pgid`.
int LiveMembers(int pgid) {
  int live = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!stat || !std::getline(stat, line)) continue;
    size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    int ppid = 0, pgrp = 0;
    if (sscanf(line.c_str() + paren + 1, " %c %d %d", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') ++live;
  }
  return live;
}

// `script` run by /bin/sh to completion.
absl::StatusOr<RunResult> RunShell(const std::string& script) {
  RunOptions opts;
  opts.argv = {"/bin/sh", "-c", script};
  return process::Run(opts);
}

TEST(RunTest, CapturesOutputAndExitCode) {
  auto r = RunShell("echo out; echo err >&2; exit 3");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->exited);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->output, "out\nerr\n");
}

TEST(RunTest, StderrCanStayTheParentsAndCwdIsSet) {
  RunOptions opts;
  opts.argv = {"/bin/sh", "-c", "pwd; echo err >&2"};
  opts.cwd = "/tmp";
  opts.stderr_with_output = false;
  auto r = process::Run(opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->output, "/tmp\n");
}

TEST(RunTest, MissingProgramIsExit127WithTheReason) {
  RunOptions opts;
  opts.argv = {"/nonexistent/tool"};
  auto r = process::Run(opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->exited);
  EXPECT_EQ(r->exit_code, 127);
  EXPECT_EQ(r->output, "cannot execute /nonexistent/tool: No such file or directory\n");
}

TEST(RunTest, SignalIsReported) {
  auto r = RunShell("kill -USR1 $$");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->exited);
  EXPECT_EQ(r->term_signal, SIGUSR1);
  EXPECT_FALSE(r->timed_out);
}

TEST(RunTest, DeadlineKillsWholeGroupQuickly) {
  RunOptions opts;
  opts.argv = {"/bin/sleep", "30"};
  opts.deadline = absl::Milliseconds(500);
  const absl::Time start = absl::Now();
  auto r = process::Run(opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->exited);
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_THAT(r->output, HasSubstr("[killed: deadline of 500ms exceeded]"));
  // The group is gone: nothing left to signal.
  EXPECT_EQ(kill(-r->pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(RunTest, DeadlineKillsGrandchildren) {
  RunOptions opts;
  // The shell's background sleeps are in its group.
  opts.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30 & wait"};
  opts.deadline = absl::Milliseconds(300);
  auto r = process::Run(opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->timed_out);
  // Orphans are reaped by init; allow it a moment, but no member may live.
  int live = -1;
  for (int i = 0; i < 50 && live != 0; ++i) {
    live = LiveMembers(r->pid);
    if (live != 0) absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(live, 0);
}

TEST(RunTest, StragglersDieWithTheChild) {
  const absl::Time start = absl::Now();
  // The shell exits at once; its background sleep holds the pipe.
  auto r = RunShell("sleep 30 & echo started");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(r->ok());
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->output, "started\n");
}

TEST(RunTest, BoundsOutput) {
  RunOptions opts;
  opts.argv = {"/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"};
  opts.max_output_bytes = 1000;
  auto r = process::Run(opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok());  // the writer never blocked on a full pipe
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->output, std::string(1000, 'x') + "\n[output truncated at 1000 bytes]\n");
}

}  // namespace
}  // namespace ptxbench::process
