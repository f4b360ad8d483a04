// No view that builds or runs submitted code holds a vendor library's bytes
// (docs/SECURITY.md, "no vendor library's bytes"). Each view is set up as
// the real code sets it up (CompilerPolicy, CandidateHostPolicy,
// SessionPolicy over MakeSessionFiles; the harness's and the reference
// host's process view as Isolation::Prepare leaves it), and
// tests/testing/view_walker runs inside it as the uid the view runs as: it
// opens every file it can read and reports each non-empty one that is a
// vendor library by its name, or by its content (an ELF whose SONAME or
// DT_NEEDED is a vendor's, or that carries vendor GPU kernels:
// worker/compile/library_check.h). Each walk prints how many files it saw.

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent_gateway/agent/session_setup.h"
#include "gtest/gtest.h"
#include "ptxbench/v1/executor.pb.h"
#include "sandbox/command.h"
#include "sandbox/view.h"
#include "tests/testing/test_binary.h"
#include "worker/compile/compiler.h"
#include "worker/runner/hosts/isolation.h"
#include "worker/runner/wire/job.h"

namespace ptxbench {
namespace {

// The walker, built here or copied beside the tests on a GPU machine.
std::string ViewWalker() { return ptxbench::testing::TestBinary(PTXB_VIEW_WALKER); }

namespace fs = std::filesystem;
using sandbox::Mount;

constexpr char kWalkerInView[] = "/ptxbench-view-walker";
constexpr uid_t kUid = 65534;  // the compiler's and the harness's default uid

struct Walk {
  std::string output;
  std::vector<std::string> vendor;  // "path why" of each vendor file found
  std::string summary;              // the walker's "walked ..." line
};

Walk Parse(const std::string& output) {
  Walk w;
  w.output = output;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (absl::ConsumePrefix(&line, "VENDOR ")) w.vendor.emplace_back(line);
    if (absl::StartsWith(line, "walked ")) w.summary = std::string(line);
  }
  return w;
}

// Runs the walker in `policy`'s sandbox over the whole view, showing the
// size of each of `show` there too.
Walk WalkSandbox(sandbox::Policy policy, const std::vector<std::string>& show = {}) {
  policy.mounts.push_back({Mount::Kind::kReadOnly, ViewWalker(), kWalkerInView});
  // A walk of a big view outlasts a build's limits; nothing else changes.
  policy.rlimits.clear();
  policy.memory_bytes = 0;
  sandbox::CommandOptions command;
  command.policy = std::move(policy);
  command.argv = {kWalkerInView};
  for (const std::string& path : show) command.argv.push_back("--show=" + path);
  command.argv.push_back("/");
  command.deadline = absl::Minutes(10);
  command.max_output_bytes = 16 << 20;
  absl::StatusOr<sandbox::CommandResult> r = sandbox::RunCommand(command);
  if (!r.ok()) return Parse(absl::StrCat("sandbox: ", r.status().message()));
  if (!r->ok()) return Parse(absl::StrCat(r->output, "\nsetup: ", r->outcome.setup_error));
  return Parse(r->output);
}

// Prints the figures and every vendor file found (the test's record).
void Report(const std::string& view, const Walk& w) {
  std::printf("[view %s] %s; %zu vendor files\n", view.c_str(), w.summary.c_str(),
              w.vendor.size());
  for (size_t i = 0; i < w.vendor.size() && i < 40; ++i) {
    std::printf("[view %s]   %s\n", view.c_str(), w.vendor[i].c_str());
  }
}

std::string TempDir(const std::string& name) {
  std::string pattern = ::testing::TempDir() + "/" + name + "_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return "";
  chmod(pattern.c_str(), 0755);
  return pattern;
}

worker::CompilerOptions CompilerOptionsHere() {
  worker::CompilerOptions o;
  o.abi_include_dir = std::string(PTXB_SOURCE_DIR) + "/worker/kernel_abi";
  o.sandbox.uid = kUid;
  o.sandbox.gid = kUid;
  return o;
}

class ViewWalkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: each view runs as its own uid";
    if (!fs::exists(ViewWalker())) GTEST_SKIP() << "no view_walker at " << ViewWalker();
  }
};

// The compiler's view (nvcc and ptxas on a submission).
TEST_F(ViewWalkTest, TheCompilersViewHoldsNoVendorLibrary) {
  const worker::CompilerOptions o = CompilerOptionsHere();
  if (!fs::exists(o.nvcc)) GTEST_SKIP() << "no CUDA toolkit at " << o.nvcc;
  const std::string build = TempDir("walk_build");
  ASSERT_EQ(chown(build.c_str(), kUid, kUid), 0);
  const Walk w = WalkSandbox(worker::CompilerPolicy(o, build));
  fs::remove_all(build);
  Report("compiler", w);
  ASSERT_FALSE(w.summary.empty()) << w.output;
  EXPECT_TRUE(w.vendor.empty()) << w.output.substr(0, 8000);
}

// The test's own check: the same view with its masks taken away holds the
// toolkit's vendor libraries, found by name and by content. Without it a
// walker that saw nothing would pass every view.
TEST_F(ViewWalkTest, WithoutItsMasksTheCompilersViewHoldsTheToolkitsLibraries) {
  const worker::CompilerOptions o = CompilerOptionsHere();
  const std::string cublas = fs::path(o.nvcc).parent_path().parent_path() / "lib64";
  bool has_cublas = false;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cublas, ec)) {
    has_cublas |= absl::StartsWith(e.path().filename().string(), "libcublas");
  }
  if (!has_cublas) GTEST_SKIP() << "no libcublas in " << cublas << ": nothing to find";
  const std::string build = TempDir("walk_build");
  ASSERT_EQ(chown(build.c_str(), kUid, kUid), 0);
  sandbox::Policy policy = worker::CompilerPolicy(o, build);
  std::erase_if(policy.mounts, [](const Mount& m) { return m.kind == Mount::Kind::kMask; });
  const Walk w = WalkSandbox(std::move(policy));
  fs::remove_all(build);
  Report("compiler, masks removed", w);
  bool by_name = false, by_content = false;
  for (const std::string& v : w.vendor) {
    if (absl::StrContains(v, "/libcublas")) by_name |= absl::StrContains(v, " name");
    by_content |= absl::StrContains(v, "SONAME libcublas") ||
                  absl::StrContains(v, "cuBLAS: ") || absl::StrContains(v, "cuBLASLt: ");
  }
  EXPECT_TRUE(by_name) << w.output.substr(0, 8000);
  EXPECT_TRUE(by_content) << w.output.substr(0, 8000);
}

// The candidate host's view (the submission's host process). It needs the
// GPU's device node and the driver library to be set up at all.
TEST_F(ViewWalkTest, TheCandidateHostsViewHoldsNoVendorLibrary) {
  runner::RunnerJob job;
  job.isolation.candidate_host = ptxbench::testing::TestBinary(PTXB_CANDIDATE_HOST);
  job.isolation.candidate_uid = kUid;
  const std::string dir = TempDir("walk_candidate");
  runner::CandidateDirs dirs;
  dirs.module = dir + "/module";
  dirs.work = dir + "/work";
  dirs.shm = dir + "/shm";
  for (const std::string& d : {dirs.module, dirs.work, dirs.shm}) {
    fs::create_directory(d);
    ASSERT_EQ(chown(d.c_str(), kUid, kUid), 0);
  }
  absl::StatusOr<sandbox::Policy> policy = runner::CandidateHostPolicy(job, dirs);
  if (!policy.ok()) {
    fs::remove_all(dir);
    GTEST_SKIP() << "the candidate host's view needs a GPU machine: " << policy.status();
  }
  const Walk w = WalkSandbox(*std::move(policy));
  fs::remove_all(dir);
  Report("candidate host", w);
  ASSERT_FALSE(w.summary.empty()) << w.output;
  EXPECT_TRUE(w.vendor.empty()) << w.output.substr(0, 8000);
}

// The harness's view, which is the reference host's too: the runner's own
// mount namespace over the host's files (Isolation::Prepare adds only a
// private /dev/shm and the candidate's disk), as the harness's uid; the
// reference host is a fork of the harness (or the PyTorch host it starts),
// so it sees the same. Only ptxbench's code runs there, and the reference
// runs the production libraries (cuBLAS, cuDNN, torch's wheels): this view
// holds them by design, and the walk lists them. It must find cuBLAS where
// the machine has it, which also shows that the walker finds vendor files
// where they are readable.
TEST_F(ViewWalkTest, TheHarnessAndReferenceViewHoldsTheProductionLibraries) {
  int out[2];
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  const std::string walker = ViewWalker();  // no allocation after the fork
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(out[1], 2);
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) ||
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=1777") != 0 ||
        setgroups(0, nullptr) != 0 || setresgid(kUid, kUid, kUid) != 0 ||
        setresuid(kUid, kUid, kUid) != 0) {
      _exit(126);
    }
    execl(walker.c_str(), walker.c_str(), "/", nullptr);
    _exit(127);
  }
  close(out[1]);
  std::string output;
  char buf[65536];
  for (ssize_t n; (n = read(out[0], buf, sizeof(buf))) > 0;) output.append(buf, n);
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << output;
  const Walk w = Parse(output);
  Report("harness = reference host", w);
  ASSERT_FALSE(w.summary.empty()) << w.output;
  const bool machine_has_cublas =
      fs::exists("/usr/local/cuda/lib64/libcublas.so") ||
      fs::exists("/usr/lib/x86_64-linux-gnu/libcublas.so");
  if (machine_has_cublas) {
    EXPECT_TRUE(std::any_of(w.vendor.begin(), w.vendor.end(), [](const std::string& v) {
      return absl::StrContains(v, "/libcublas") &&
             (absl::StrContains(v, "SONAME libcublas") || absl::StrContains(v, "cuBLAS"));
    })) << w.output.substr(0, 8000);
  }
}

// An agent session's view, with and without `toolchain: cuda`: the host's
// programs, the toolkit's headers and compilers (under /usr/local), the
// CLIs; no vendor library.
class AgentViewWalkTest : public ViewWalkTest,
                          public ::testing::WithParamInterface<const char*> {};

TEST_P(AgentViewWalkTest, TheAgentsViewHoldsNoVendorLibrary) {
  agent_gateway::SessionOptions options;
  options.clis_dir = PTXB_AGENT_CLIS_DIR;
  options.tool_binary = PTXB_AGENT_TOOL_BIN;
  options.sessions_dir = TempDir("walk_sessions");
  v1::Task task;
  task.mutable_lease()->set_task_id("walk");
  v1::AgentSession* s = task.mutable_agent();
  s->set_session(1);
  s->set_language("cuda");
  s->mutable_settings()->set_cli("codex");
  s->mutable_settings()->set_toolchain(GetParam());
  absl::StatusOr<agent_gateway::session_internal::SessionFiles> files =
      agent_gateway::session_internal::MakeSessionFiles(options, task, kUid);
  ASSERT_TRUE(files.ok()) << files.status();
  const agents::AgentCli* cli = agents::FindAgentCli("codex");
  ASSERT_NE(cli, nullptr);
  // The toolkit's headers, compilers and runtime stay: what the agent needs
  // to build and check a kernel without a GPU.
  const std::vector<std::string> toolkit = {"/usr/local/cuda/bin/nvcc", "/usr/local/cuda/bin/ptxas",
                                            "/usr/local/cuda/include/cuda_runtime.h",
                                            "/usr/local/cuda/include/cublas_v2.h"};
  const Walk w = WalkSandbox(
      agent_gateway::session_internal::SessionPolicy(options, *cli, *files, agents::Launch{}),
      toolkit);
  agent_gateway::session_internal::RemoveSessionDirectory(files->dir);
  fs::remove_all(options.sessions_dir);
  Report(absl::StrCat("agent, toolchain ", GetParam()), w);
  ASSERT_FALSE(w.summary.empty()) << w.output;
  EXPECT_TRUE(w.vendor.empty()) << w.output.substr(0, 8000);
  for (const std::string& path : toolkit) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || st.st_size == 0) continue;  // not on this machine
    EXPECT_TRUE(absl::StrContains(w.output, absl::StrCat("SHOW ", path, " ", st.st_size, "\n")))
        << path << " is not whole in the agent's view:\n" << w.output.substr(0, 2000);
  }
}

INSTANTIATE_TEST_SUITE_P(Toolchains, AgentViewWalkTest, ::testing::Values("none", "cuda"));

}  // namespace
}  // namespace ptxbench
