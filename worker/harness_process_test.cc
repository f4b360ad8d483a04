#include "worker/harness_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;

HarnessProcessOptions Shell(const std::string& script) {
  HarnessProcessOptions o;
  o.argv = {"/bin/sh", "-c", script};
  o.deadline = absl::Seconds(10);
  o.temp_root = ::testing::TempDir();
  return o;
}

TEST(SandboxTest, CleanExitHandsBackTheFilesItWrote) {
  HarnessProcessOptions o = Shell("cat request.txt > result.txt; echo done >> result.txt");
  o.files = {{"request.txt", "hello\n"}};
  o.collect = {"result.txt"};
  auto out = RunHarnessProcess(o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->status, v1::EVAL_STATUS_UNSPECIFIED) << out->diagnostic;
  EXPECT_EQ(out->collected["result.txt"], "hello\ndone\n");
  EXPECT_FALSE(std::filesystem::exists(out->private_dir)) << "private dir removed";
}

TEST(SandboxTest, FilesWrittenBeforeACrashAreStillCollected) {
  HarnessProcessOptions o = Shell("echo first >> results.txt; kill -SEGV $$");
  o.collect = {"results.txt", "never.txt"};
  auto out = RunHarnessProcess(o);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->status, v1::RUNTIME_ERROR);
  EXPECT_EQ(out->collected["results.txt"], "first\n");
  EXPECT_FALSE(out->collected.contains("never.txt"));
}

TEST(SandboxTest, SegfaultIsARuntimeErrorWithTheSignal) {
  auto out = RunHarnessProcess(Shell("echo about to crash >&2; kill -SEGV $$"));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->status, v1::RUNTIME_ERROR);
  EXPECT_TRUE(absl::StrContains(out->diagnostic, "signal 11")) << out->diagnostic;
  EXPECT_TRUE(absl::StrContains(out->diagnostic, "about to crash")) << out->diagnostic;
}

TEST(SandboxTest, NonZeroExitIsARuntimeError) {
  auto out = RunHarnessProcess(Shell("echo 'an illegal memory access was encountered' >&2; exit 3"));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->status, v1::RUNTIME_ERROR);
  EXPECT_TRUE(absl::StrContains(out->diagnostic, "exited with code 3"));
  EXPECT_TRUE(absl::StrContains(out->diagnostic, "illegal memory access"));
}

TEST(SandboxTest, HangIsKilledAtTheDeadlineWithItsChildren) {
  HarnessProcessOptions o = Shell("sleep 30 & sleep 30; wait");
  o.deadline = absl::Milliseconds(300);
  absl::Time start = absl::Now();
  auto out = RunHarnessProcess(o);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->status, v1::TIMEOUT);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  // Killed members are gone once reaped (orphans are reaped by init).
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = kill(-out->process.pid, 0) != 0;
    if (!gone) usleep(10'000);
  }
  EXPECT_TRUE(gone) << "a member of the process group survived the deadline";
}

TEST(SandboxTest, EnvironmentIsScrubbedAndPinnedToOneGpu) {
  setenv("PTXBENCH_SECRET_TOKEN", "do-not-leak", 1);
  HarnessProcessOptions o = Shell("env > env.txt");
  o.collect = {"env.txt"};
  o.gpu_index = 1;
  auto out = RunHarnessProcess(o);
  ASSERT_TRUE(out.ok());
  const std::string env = out->collected["env.txt"];
  EXPECT_FALSE(absl::StrContains(env, "PTXBENCH_SECRET_TOKEN")) << env;
  EXPECT_TRUE(absl::StrContains(env, "CUDA_VISIBLE_DEVICES=1")) << env;
  EXPECT_TRUE(absl::StrContains(env, "TMPDIR=" + out->private_dir)) << env;
  unsetenv("PTXBENCH_SECRET_TOKEN");
}

TEST(SandboxTest, NoInheritedDescriptorsAndLimitsApplied) {
  // A descriptor the worker holds without close-on-exec (like a gRPC socket).
  int leaked = open("/dev/null", O_RDONLY);
  ASSERT_GE(leaked, 3);
  HarnessProcessOptions o = Shell(
      "ls /proc/$$/fd > fds.txt; ulimit -n > nofile.txt; ulimit -c > core.txt");
  o.collect = {"fds.txt", "nofile.txt", "core.txt"};
  o.max_open_files = 64;
  auto out = RunHarnessProcess(o);
  close(leaked);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->collected["fds.txt"].find(std::to_string(leaked) + "\n"), std::string::npos)
      << out->collected["fds.txt"];
  EXPECT_EQ(out->collected["nofile.txt"], "64\n");
  EXPECT_EQ(out->collected["core.txt"], "0\n");
}

}  // namespace
}  // namespace ptxbench::worker
