#include "worker/compile/subprocess.h"

#include <signal.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ptxbench::worker {
namespace {

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

TEST(SubprocessTest, CapturesOutputAndExitCode) {
  SubprocessOptions opts;
  opts.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  auto r = RunSubprocess(opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->exited);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->timed_out);
  EXPECT_NE(r->output.find("out\n"), std::string::npos);
  EXPECT_NE(r->output.find("err\n"), std::string::npos);
}

TEST(SubprocessTest, RunsInCwd) {
  SubprocessOptions opts;
  opts.argv = {"/bin/pwd"};
  opts.cwd = "/tmp";
  auto r = RunSubprocess(opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->output, "/tmp\n");
}

TEST(SubprocessTest, MissingProgramIsExit127) {
  SubprocessOptions opts;
  opts.argv = {"/nonexistent/tool"};
  auto r = RunSubprocess(opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 127);
  EXPECT_NE(r->output.find("/nonexistent/tool"), std::string::npos);
}

TEST(SubprocessTest, DeadlineKillsWholeGroupQuickly) {
  SubprocessOptions opts;
  opts.argv = {"/bin/sleep", "30"};
  opts.deadline = absl::Milliseconds(500);
  const absl::Time start = absl::Now();
  auto r = RunSubprocess(opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->exited);
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_NE(r->output.find("deadline"), std::string::npos);
  // The group is gone: nothing left to signal.
  EXPECT_EQ(kill(-r->pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(SubprocessTest, DeadlineKillsGrandchildren) {
  SubprocessOptions opts;
  // The shell's background sleeps are in the same group and outlive nothing.
  opts.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30 & wait"};
  opts.deadline = absl::Milliseconds(300);
  auto r = RunSubprocess(opts);
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

TEST(SubprocessTest, BoundsOutput) {
  SubprocessOptions opts;
  opts.argv = {"/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"};
  opts.max_output_bytes = 1000;
  auto r = RunSubprocess(opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok());
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->output.substr(0, 1000), std::string(1000, 'x'));
  EXPECT_NE(r->output.find("truncated"), std::string::npos);
  EXPECT_LT(r->output.size(), 1100u);
}

}  // namespace
}  // namespace ptxbench::worker
