// Tests of `ptxbench up` with stand-in daemons: the fake scheduler binary
// (FakeClientService behind --listen) and shell scripts as worker and gateway.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/unused_port.h"

namespace ptxbench::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int code;
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

class UpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            absl::StrCat("up_test_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "bin");
    data_dir_ = (root_ / "data").string();
    listen_ = absl::StrCat("127.0.0.1:", testing::UnusedPort());
    spec_ = (root_ / "spec.json").string();
    std::ofstream(spec_) << R"({"name": "quickstart"})";
  }
  void TearDown() override { fs::remove_all(root_); }

  void InstallFakeScheduler() {
    fs::create_symlink(PTXB_FAKE_SCHEDULER, root_ / "bin" / "ptxbench-scheduler");
  }
  void WriteScript(const std::string& name, const std::string& body) {
    const fs::path path = root_ / "bin" / name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    fs::permissions(path, fs::perms::owner_all);
  }
  fs::path Log(const std::string& name) const {
    return fs::path(data_dir_) / "logs" / (name + ".log");
  }

  Result Run(std::vector<std::string> args) {
    std::ostringstream out, err;
    CliEnvironment env;
    env.out = &out;
    env.err = &err;
    env.self_exe = (root_ / "bin" / "ptxbench").string();  // daemons are found beside it
    const int code = RunCli(args, env);
    return {code, out.str(), err.str()};
  }

  fs::path root_;
  std::string data_dir_;
  std::string listen_;
  std::string spec_;
};

TEST_F(UpTest, SubmitsWatchesAndStopsEverythingWhenDone) {
  InstallFakeScheduler();
  WriteScript("ptxbench-worker", "echo \"worker args: $*\"\nexec sleep 30\n");
  WriteScript("ptxbench-gateway", "echo \"gateway args: $*\"\nexec sleep 30\n");

  const auto start = std::chrono::steady_clock::now();
  Result r = Run({"up", "--simulate", "--listen", listen_, "--data-dir", data_dir_, "--submit",
                  spec_, "--exit-when-done"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));  // no SIGKILL wait
  EXPECT_THAT(r.out, HasSubstr("ptxbench is up (SIMULATED workers and gateways)"));
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("scheduler  ", listen_)));
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("database   ", data_dir_, "/ptxbench.db")));
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("ptxbench --scheduler ", listen_, " status")));
  EXPECT_THAT(r.out, Not(HasSubstr("note: real GPU workers")));
  EXPECT_THAT(r.out, HasSubstr("submitted experiment 'quickstart'"));
  EXPECT_THAT(r.out, HasSubstr("4/4 (100%) finished"));                    // the watch
  EXPECT_THAT(r.out, HasSubstr("experiment  exp_0123abcd (quickstart)"));  // final status
  EXPECT_THAT(r.out, HasSubstr("stopped; state is kept in"));
  EXPECT_THAT(r.err, Not(HasSubstr("killed")));

  EXPECT_THAT(ReadFile(Log("scheduler")), HasSubstr("fake scheduler listening on " + listen_));
  EXPECT_THAT(ReadFile(Log("scheduler")),
              HasSubstr(absl::StrCat("--listen ", listen_, " --data-dir ", data_dir_)));
  EXPECT_THAT(ReadFile(Log("scheduler")), HasSubstr("stopping"));  // got SIGTERM, not SIGKILL
  // The arguments each executor got, as `up` logged them when it started it
  // (the script's own echo may not run: a fast experiment is stopped within
  // milliseconds, and a loaded machine can get there first; CI did).
  for (const char* daemon : {"worker", "gateway"}) {
    EXPECT_THAT(ReadFile(Log(absl::StrCat(daemon, "-1"))),
                HasSubstr(absl::StrCat("starting ", (root_ / "bin").string(), "/ptxbench-", daemon,
                                       " --scheduler ", listen_, " --token-file ", data_dir_,
                                       "/admin.token --stop-grace-s 7 --simulate\n")));
  }

  // Everything is gone: nobody answers at the address any more.
  Result after = Run({"status", "--scheduler", listen_, "--timeout", "2"});
  EXPECT_EQ(after.code, 1);
  EXPECT_THAT(after.err, HasSubstr("cannot reach scheduler"));
}

TEST_F(UpTest, RealExecutorThatGivesUpAtStartShowsItsReasonAndStopsEverything) {
  InstallFakeScheduler();
  WriteScript("ptxbench-worker", "echo \"worker args: $*\"\nexec sleep 30\n");
  WriteScript("ptxbench-gateway",
              "echo \"gateway args: $*\"\n"
              "echo 'ptxbench-gateway: model gpt-x needs an API key in $X_API_KEY (not set)'\n"
              "exit 2\n");
  Result r = Run({"up", "--listen", listen_, "--data-dir", data_dir_, "--models", "extra.json",
                  "--model", "gpt-x", "--submit", spec_});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("needs an API key in $X_API_KEY (not set)"));
  EXPECT_THAT(r.err, HasSubstr("gateway-1 exited with code 2 while starting"));
  EXPECT_THAT(r.out, Not(HasSubstr("submitted")));
  EXPECT_THAT(ReadFile(Log("gateway-1")),
              HasSubstr(absl::StrCat("gateway args: --scheduler ", listen_, " --token-file ",
                                     data_dir_,
                                     "/admin.token --stop-grace-s 7 --models extra.json "
                                     "--serve gpt-x")));
  // The worker may be stopped before its script prints anything (the
  // gateway's exit stops everything at once): its log's header, written by
  // `up` before the worker starts, is what names its arguments.
  const std::string worker = (root_ / "bin" / "ptxbench-worker").string();
  EXPECT_THAT(ReadFile(Log("worker-1")),
              HasSubstr(absl::StrCat("starting ", worker, " --scheduler ", listen_,
                                     " --token-file ", data_dir_,
                                     "/admin.token --stop-grace-s 7\n")));
  EXPECT_THAT(ReadFile(Log("scheduler")), HasSubstr("stopping"));
}

TEST_F(UpTest, SigtermStopsEverythingAndReportsDeadExecutors) {
  InstallFakeScheduler();
  WriteScript("ptxbench-worker", "echo 'worker exiting'\nexit 2\n");
  // Stop once the worker has run (the scheduler answered, handlers are in place).
  std::thread stopper([this] {
    for (int i = 0; i < 100; ++i) {
      if (ReadFile(Log("worker-1")).find("worker exiting") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGTERM);
  });
  Result r = Run({"up", "--simulate", "--listen", listen_, "--data-dir", data_dir_, "--gateways",
                  "0"});
  stopper.join();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("ptxbench: worker-1 exited with code 2 (log: ",
                                            Log("worker-1").string(), ")")));
  EXPECT_THAT(r.out, HasSubstr("stopping 1 processes"));
  EXPECT_THAT(ReadFile(Log("scheduler")), HasSubstr("stopping"));
}

TEST_F(UpTest, SchedulerThatDiesAtStartShowsItsLog) {
  WriteScript("ptxbench-scheduler", "echo 'cannot bind: address in use' >&2\nexit 3\n");
  Result r = Run({"up", "--simulate", "--listen", listen_, "--data-dir", data_dir_, "--workers",
                  "0", "--gateways", "0"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot bind: address in use"));
  EXPECT_THAT(r.err, HasSubstr("ptxbench: the scheduler exited with code 3 while starting; see " +
                               Log("scheduler").string() + "\n"));
}

TEST_F(UpTest, MissingDaemonIsNamed) {
  InstallFakeScheduler();  // but no worker
  Result r = Run({"up", "--simulate", "--listen", listen_, "--data-dir", data_dir_});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("ptxbench: cannot find ptxbench-worker (looked in "));
  EXPECT_THAT(r.err, HasSubstr("build it with 'ninja ptxbench-worker'"));
}

// --triton starts real workers that offer Triton submissions on the Python
// given; simulated workers need no flag (they run Triton experiments as they
// are), so the two together are a usage error.
TEST_F(UpTest, TritonIsOfferedByTheWorkersItStarts) {
  InstallFakeScheduler();
  WriteScript("ptxbench-worker", "echo \"worker args: $*\"\nexit 3\n");
  Result r = Run({"up", "--listen", listen_, "--data-dir", data_dir_, "--gateways", "0",
                  "--torch-python", "/opt/torch/bin/python3", "--triton", "--submit", spec_});
  EXPECT_EQ(r.code, 1);
  const std::string worker = (root_ / "bin" / "ptxbench-worker").string();
  EXPECT_THAT(ReadFile(Log("worker-1")),
              HasSubstr(absl::StrCat("starting ", worker, " --scheduler ", listen_,
                                     " --token-file ", data_dir_,
                                     "/admin.token --stop-grace-s 7 --torch_python "
                                     "/opt/torch/bin/python3 --triton\n")));

  Result simulated = Run({"up", "--simulate", "--triton", "--listen", listen_});
  EXPECT_EQ(simulated.code, 2);
  EXPECT_THAT(simulated.err, HasSubstr("--triton is for real workers"));
}

TEST_F(UpTest, BadListenAddressIsAUsageError) {
  Result r = Run({"up", "--listen", "localhost"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--listen must be HOST:PORT"));
}

}  // namespace
}  // namespace ptxbench::cli
