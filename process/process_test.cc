#include "process/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::process {
namespace {

using ::testing::HasSubstr;

// The file's text, or "" while it does not exist.
std::string ReadAll(const std::string& path) { return ReadFile(path).value_or(""); }

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / "process_test-XXXXXX";
    std::string pattern = dir_.string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Spawns with stdout and stderr appended to log().
  absl::StatusOr<Process> SpawnToLog(SpawnOptions options) {
    const int fd = open(log().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return absl::InternalError("cannot open the log");
    options.output = SpawnOptions::Output::kDescriptor;
    options.output_fd = fd;
    absl::StatusOr<Process> p = Process::Spawn(options);
    close(fd);
    return p;
  }
  std::string log() const { return (dir_ / "log").string(); }

  std::filesystem::path dir_;
};

TEST_F(ProcessTest, MissingBinaryIsOneFailedPreconditionNamingIt) {
  SpawnOptions options;
  options.argv = {"/nonexistent/tool", "--flag"};
  absl::StatusOr<Process> p = Process::Spawn(options);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(p.status().message(), "cannot execute /nonexistent/tool: No such file or directory");
}

TEST_F(ProcessTest, MissingCwdIsFailedPrecondition) {
  SpawnOptions options;
  options.argv = {"/bin/true"};
  options.cwd = "/nonexistent/dir";
  absl::StatusOr<Process> p = Process::Spawn(options);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("cannot enter /nonexistent/dir"));
}

TEST_F(ProcessTest, EmptyArgvIsInvalidArgument) {
  EXPECT_EQ(Process::Spawn(SpawnOptions{}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ProcessTest, ExitCodeIsReported) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "exit 3"};
  absl::StatusOr<Process> p = Process::Spawn(options);
  ASSERT_TRUE(p.ok()) << p.status();
  const ExitStatus s = p->Wait();
  EXPECT_TRUE(s.exited);
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_EQ(s.ShellCode(), 3);
  EXPECT_EQ(s.Describe(), "exited with code 3");
  EXPECT_FALSE(p->running());
}

TEST_F(ProcessTest, SignalIsReported) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "30"};
  absl::StatusOr<Process> p = Process::Spawn(options);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->TryWait().has_value());
  p->Signal(SIGTERM);
  const ExitStatus s = p->Wait();
  EXPECT_FALSE(s.exited);
  EXPECT_EQ(s.term_signal, SIGTERM);
  EXPECT_EQ(s.ShellCode(), 128 + SIGTERM);
  EXPECT_EQ(s.Describe(), "was killed by signal 15 (Terminated)");
}

TEST_F(ProcessTest, LeadsItsOwnGroupUnlessTold) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "30"};
  absl::StatusOr<Process> own = Process::Spawn(options);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(getpgid(own->pid()), own->pid());
  options.new_process_group = false;
  absl::StatusOr<Process> shared = Process::Spawn(options);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(getpgid(shared->pid()), getpgrp());
  EXPECT_EQ(own->Kill().term_signal, SIGKILL);
  EXPECT_EQ(shared->Kill().term_signal, SIGKILL);
}

TEST_F(ProcessTest, DestructorKillsAndReaps) {
  pid_t pid = -1;
  {
    SpawnOptions options;
    options.argv = {"/bin/sleep", "30"};
    absl::StatusOr<Process> p = Process::Spawn(options);
    ASSERT_TRUE(p.ok()) << p.status();
    pid = p->pid();
  }
  // Reaped: not even a zombie is left.
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(ProcessTest, OutputToADescriptorAndNoOtherParentDescriptor) {
  // Not close-on-exec, like gRPC's sockets: the child must not get it.
  const int leaked = open("/dev/null", O_RDONLY);
  ASSERT_GE(leaked, 0);
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "echo out; echo err >&2; ls /proc/self/fd"};
  absl::StatusOr<Process> p = SpawnToLog(options);
  close(leaked);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->Wait().ok());
  // ls's descriptors: stdio, and 3 for the directory it reads.
  EXPECT_EQ(ReadAll(log()), "out\nerr\n0\n1\n2\n3\n");
}

TEST_F(ProcessTest, EnvironmentCwdAndLimits) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "echo \"$ONLY\" \"$HOME\"; pwd; ulimit -n"};
  options.environment = std::vector<std::string>{"ONLY=yes"};
  options.cwd = dir_.string();
  options.rlimits = {{RLIMIT_NOFILE, 64}};
  absl::StatusOr<Process> p = SpawnToLog(options);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->Wait().ok());
  EXPECT_EQ(ReadAll(log()), "yes \n" + dir_.string() + "\n64\n");
}

// One list: the set the daemons wait on is the signals IsStopSignal names.
TEST(StopSignals, TheSetIsWhatIsStopSignalNames) {
  const sigset_t set = StopSignalSet();
  int members = 0;
  for (int sig = 1; sig < NSIG; ++sig) {
    EXPECT_EQ(sigismember(&set, sig) == 1, IsStopSignal(sig)) << strsignal(sig);
    members += IsStopSignal(sig);
  }
  EXPECT_EQ(members, 4);
  EXPECT_TRUE(IsStopSignal(SIGHUP));
  EXPECT_FALSE(IsStopSignal(SIGKILL));
}

// A child told to ignore the stop signals, and what it starts, outlive them
// all (sent to the whole group, as a batch system sends them to a job step)
// and end by themselves; SIGKILL still ends them.
TEST_F(ProcessTest, IgnoringStopSignalsOutlivesThemButNotAKill) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "sleep 1; echo finished"};
  options.ignore_stop_signals = true;
  absl::StatusOr<Process> p = SpawnToLog(options);
  ASSERT_TRUE(p.ok()) << p.status();
  usleep(200'000);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) p->SignalGroup(sig);
  const ExitStatus s = p->Wait();
  EXPECT_TRUE(s.ok()) << s.Describe();
  EXPECT_EQ(ReadAll(log()), "finished\n");

  options.argv = {"/bin/sleep", "30"};
  absl::StatusOr<Process> killed = Process::Spawn(options);
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(killed->Kill().term_signal, SIGKILL);
}

TEST_F(ProcessTest, SignalGroupReachesGrandchildren) {
  SpawnOptions options;
  // The shell prints the background sleep's pid, then waits.
  options.argv = {"/bin/sh", "-c", "sleep 30 & echo $!; wait"};
  absl::StatusOr<Process> p = SpawnToLog(options);
  ASSERT_TRUE(p.ok()) << p.status();
  pid_t grandchild = 0;
  for (int i = 0; i < 200 && grandchild == 0; ++i) {
    grandchild = std::atoi(ReadAll(log()).c_str());
    if (grandchild == 0) usleep(10'000);
  }
  ASSERT_GT(grandchild, 0);
  p->SignalGroup(SIGKILL);
  EXPECT_EQ(p->Wait().term_signal, SIGKILL);
  // The grandchild is init's to reap now; it must not stay alive.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string line;
    gone = !std::getline(stat, line) || line.find(") Z") != std::string::npos;
    if (!gone) usleep(10'000);
  }
  EXPECT_TRUE(gone);
}

}  // namespace
}  // namespace ptxbench::process
