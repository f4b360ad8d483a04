#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sandbox/command.h"
#include "sandbox/limiter.h"
#include "sandbox/process.h"
#include "sandbox/view.h"
#include "testing/process.h"

namespace ptxbench::sandbox {
namespace {

namespace fs = std::filesystem;

// A private directory the sandboxed uid may write.
class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/sandbox_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    work_ = pattern;
    ASSERT_EQ(chmod(work_.c_str(), 0755), 0);
    if (geteuid() == 0) {
      ASSERT_EQ(chown(work_.c_str(), 65534, 65534), 0);
    }
  }
  void TearDown() override { fs::remove_all(work_); }

  // The probe binary, its libraries and the private directory; nothing else.
  Policy ProbePolicy() const {
    ViewBuilder view;
    view.AddHostPath("/usr/lib", Mount::Kind::kReadOnly);
    view.AddHostPath("/lib64/ld-linux-x86-64.so.2", Mount::Kind::kReadOnly);
    view.AddHostPath(fs::path(PTXB_SANDBOX_PROBE).parent_path().string(), Mount::Kind::kReadOnly);
    view.AddHostPath(work_, Mount::Kind::kReadWrite);
    Policy policy;
    policy.mounts = view.mounts();
    policy.cwd = work_;
    policy.env = {"PATH=/usr/bin", "HOME=" + work_};
    return policy;
  }

  CommandResult Probe(std::vector<std::string> args, Policy policy,
                      absl::Duration deadline = absl::Seconds(20)) {
    CommandOptions o;
    o.policy = std::move(policy);
    o.argv = {PTXB_SANDBOX_PROBE};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.deadline = deadline;
    absl::StatusOr<CommandResult> r = RunCommand(o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }
  CommandResult Probe(std::vector<std::string> args) { return Probe(std::move(args), ProbePolicy()); }

  std::string work_;
};

TEST_F(SandboxTest, RunsWithNoCapabilitiesUnderSeccompAsTheSandboxUid) {
  CommandResult r = Probe({"status"});
  ASSERT_TRUE(r.ok()) << r.output << r.outcome.setup_error;
  EXPECT_TRUE(absl::StrContains(r.output, "CapEff:\t0000000000000000")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "CapPrm:\t0000000000000000")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "NoNewPrivs:\t1")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "Seccomp:\t2")) << r.output;
  if (geteuid() == 0) {
    EXPECT_TRUE(absl::StrContains(r.output, "Uid:\t65534")) << r.output;
  }
}

TEST_F(SandboxTest, SeesOnlyItsOwnProcesses) {
  CommandResult r = Probe({"processes"});
  // Its init and itself.
  EXPECT_TRUE(absl::StrContains(r.output, "processes 2")) << r.output;
}

TEST_F(SandboxTest, CannotReadAnotherProcesssEnvironment) {
  // A secret in this process's environment, and in a child that outlives
  // the probe's start, as a gateway's API key would be.
  const std::string secret = "sk-ptxbench-test-secret-4242";
  setenv("PTXB_TEST_API_KEY", secret.c_str(), 1);
  const pid_t holder = fork();
  if (holder == 0) {
    execl("/bin/sleep", "sleep", "30", nullptr);
    _exit(1);
  }
  CommandResult r = Probe({"environ", secret});
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  unsetenv("PTXB_TEST_API_KEY");
  EXPECT_TRUE(absl::StrContains(r.output, "found 0")) << r.output;
  EXPECT_FALSE(absl::StrContains(r.output, secret));
}

TEST_F(SandboxTest, CannotOpenANetworkSocket) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 8), 0);
  socklen_t len = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  CommandResult r = Probe({"connect", std::to_string(ntohs(addr.sin_port))});
  EXPECT_TRUE(absl::StrContains(r.output, "refused: socket: Operation not permitted")) << r.output;
  EXPECT_LT(accept(listener, nullptr, nullptr), 0) << "the listener saw a connection";
  close(listener);
}

TEST_F(SandboxTest, WritesOnlyInItsOwnDirectory) {
  EXPECT_TRUE(Probe({"write", work_ + "/mine"}).ok());
  EXPECT_TRUE(fs::exists(work_ + "/mine"));
  // Outside: a path the view does not have, and a read-only bind.
  const std::string outside = ::testing::TempDir() + "/sandbox_test_escape";
  CommandResult r = Probe({"write", outside});
  EXPECT_FALSE(r.ok()) << r.output;
  EXPECT_FALSE(fs::exists(outside));
  r = Probe({"write", "/usr/lib/ptxb-escape"});
  EXPECT_TRUE(absl::StrContains(r.output, "Read-only file system")) << r.output;
  EXPECT_FALSE(fs::exists("/usr/lib/ptxb-escape"));
  r = Probe({"write", "/ptxb-escape"});
  EXPECT_FALSE(r.ok()) << r.output;
}

TEST_F(SandboxTest, SeesNoFileOutsideItsView) {
  CommandResult r = Probe({"read", "/etc/passwd"});
  EXPECT_TRUE(absl::StrContains(r.output, "No such file or directory")) << r.output;
  r = Probe({"read", "/etc/hostname"});
  EXPECT_FALSE(r.ok()) << r.output;
}

TEST_F(SandboxTest, NothingItStartsOutlivesIt) {
  const std::string marker = absl::StrCat("ptxb-linger-", getpid(), "-", rand());
  CommandResult r = Probe({"linger", marker});
  EXPECT_TRUE(absl::StrContains(r.output, "left a process behind")) << r.output;
  // Scan every process of the machine for the marker.
  int found = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline");
    std::stringstream text;
    text << in.rdbuf();
    if (absl::StrContains(text.str(), marker)) ++found;
  }
  EXPECT_EQ(found, 0);
}

TEST_F(SandboxTest, CannotTraceOrMakeNamespaces) {
  CommandResult r = Probe({"ptrace", "1"});
  EXPECT_TRUE(absl::StrContains(r.output, "refused: ptrace: Operation not permitted")) << r.output;
  r = Probe({"unshare"});
  EXPECT_TRUE(absl::StrContains(r.output, "refused: unshare: Operation not permitted")) << r.output;
}

TEST_F(SandboxTest, SignalsReachNothingOutsideAndSparePidOne) {
  // kill(-1) from inside reaches only the sandbox's own processes; the
  // init ignores signals from inside its namespace; the caller is untouched.
  CommandResult r = Probe({"killall"});
  EXPECT_TRUE(r.outcome.exited) << r.output << " signal " << r.outcome.term_signal;
  EXPECT_TRUE(absl::StrContains(r.output, "survived (parent 1)")) << r.output;
}

TEST_F(SandboxTest, MemoryLimitKillsTheSandbox) {
  Policy policy = ProbePolicy();
  policy.memory_bytes = uint64_t{256} << 20;
  CommandResult r = Probe({"alloc", "4096"}, policy);
  EXPECT_TRUE(r.outcome.memory_exceeded);
  EXPECT_FALSE(absl::StrContains(r.output, "allocated")) << r.output;
  // The watchdog polls every few milliseconds: a little growth past the limit.
  EXPECT_LT(r.outcome.peak_memory_bytes, policy.memory_bytes + (uint64_t{256} << 20));
}

// The harness reads its hosts' cgroup files after dropping to the sandbox
// uid; a cgroup made (or left by an earlier worker) under umask 077 must
// still be searchable. A plain directory behaves as a cgroup one here.
TEST_F(SandboxTest, CgroupDirectoriesAreSearchableWhateverTheUmask) {
  const std::string dir = work_ + "/cgroup";
  const mode_t before = umask(077);
  EXPECT_EQ(MakeCgroupDir(dir, false), 0);
  EXPECT_EQ(MakeCgroupDir(dir, false), EEXIST);
  umask(before);
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
  EXPECT_EQ(MakeCgroupDir(dir, true), 0);
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST_F(SandboxTest, ProcessLimitStopsAForkBomb) {
  Policy policy = ProbePolicy();
  policy.max_processes = 32;
  CommandResult r = Probe({"forkbomb"}, policy);
  EXPECT_TRUE(r.outcome.processes_exceeded);
  EXPECT_LT(r.elapsed, absl::Seconds(10));
}

TEST_F(SandboxTest, DeadlineKillsEverything) {
  CommandResult r = Probe({"sleep", "60"}, ProbePolicy(), absl::Milliseconds(300));
  EXPECT_TRUE(r.outcome.timed_out);
  EXPECT_LT(r.elapsed, absl::Seconds(5));
}

TEST_F(SandboxTest, ExitCodeAndSignalAreReported) {
  CommandResult r = Probe({"read", "/nonexistent"});
  EXPECT_TRUE(r.outcome.exited);
  EXPECT_EQ(r.outcome.exit_code, 1);
  r = Probe({"no-such-action"});
  EXPECT_EQ(r.outcome.exit_code, 2);
}

TEST_F(SandboxTest, AMissingProgramIsASetupError) {
  CommandOptions o;
  o.policy = ProbePolicy();
  o.argv = {"/usr/bin/not-in-the-view"};
  absl::StatusOr<CommandResult> r = RunCommand(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(absl::StrContains(r->outcome.setup_error, "exec")) << r->outcome.setup_error;
  EXPECT_FALSE(r->ok());
}

// A worker started by a Slurm job inherits its umask 077; the view's
// directories must still be searchable by the sandbox uid.
TEST_F(SandboxTest, RunsWhateverTheCallersUmask) {
  const mode_t before = umask(077);
  CommandResult r = Probe({"status"});
  umask(before);
  EXPECT_TRUE(r.ok()) << r.output << r.outcome.setup_error;
}

// A build or a measurement must not end midway because a batch system sent
// a stop signal to every process of the job step: the payload ignores them
// and ends by itself (its init, PID 1 of the namespace, gets none).
TEST_F(SandboxTest, StopSignalsToEveryProcessDoNotEndThePayload) {
  SandboxedProcess::Spec spec;
  spec.policy = ProbePolicy();
  spec.argv = {PTXB_SANDBOX_PROBE, "sleep", "1"};
  absl::StatusOr<std::unique_ptr<SandboxedProcess>> p = SandboxedProcess::Start(spec);
  ASSERT_TRUE(p.ok()) << p.status();
  usleep(300000);
  int sent = 0;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sent += ::ptxbench::testing::SignalDescendants((*p)->init_pid(), sig);
  EXPECT_GE(sent, 4) << "the payload was not found below the sandbox's init";
  kill((*p)->init_pid(), SIGTERM);
  while (!(*p)->Poll()) usleep(5000);
  EXPECT_TRUE((*p)->outcome().exited) << "killed by signal " << (*p)->outcome().term_signal;
  EXPECT_EQ((*p)->outcome().exit_code, 0);
}

TEST_F(SandboxTest, SuspendedPayloadWaitsForRelease) {
  SandboxedProcess::Spec spec;
  spec.policy = ProbePolicy();
  spec.argv = {PTXB_SANDBOX_PROBE, "write", work_ + "/released"};
  spec.suspended = true;
  absl::StatusOr<std::unique_ptr<SandboxedProcess>> p = SandboxedProcess::Start(spec);
  ASSERT_TRUE(p.ok()) << p.status();
  usleep(200000);
  EXPECT_FALSE((*p)->Poll());
  EXPECT_FALSE(fs::exists(work_ + "/released"));
  ASSERT_TRUE((*p)->Release().ok());
  while (!(*p)->Poll()) usleep(5000);
  EXPECT_TRUE((*p)->outcome().exited);
  EXPECT_EQ((*p)->outcome().exit_code, 0);
  EXPECT_TRUE(fs::exists(work_ + "/released"));
}

TEST_F(SandboxTest, UserNamespacePathIsolatesTheSame) {
  Policy policy = ProbePolicy();
  policy.force_user_namespace = true;
  CommandResult r = Probe({"processes"}, policy);
  EXPECT_TRUE(absl::StrContains(r.output, "processes 2")) << r.output << r.outcome.setup_error;
  r = Probe({"status"}, policy);
  EXPECT_TRUE(absl::StrContains(r.output, "CapEff:\t0000000000000000")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "Seccomp:\t2")) << r.output;
  r = Probe({"unshare"}, policy);
  EXPECT_TRUE(absl::StrContains(r.output, "Operation not permitted")) << r.output;
}

}  // namespace
}  // namespace ptxbench::sandbox
