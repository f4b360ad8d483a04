// End-to-end tests of RunCli against an in-process fake ClientService.

#include "cli/cli.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/terminal/interrupt.h"
#include "cli/testing/fake_client_service.h"
#include "gmock/gmock.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/unused_port.h"

namespace ptxbench::cli {
namespace {

namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;

using fakes::FakeClientService;

struct Result {
  int code;
  std::string out;
  std::string err;
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = absl::StrCat("127.0.0.1:", port_);
    spec_path_ = absl::StrCat(::testing::TempDir(), "/cli_test_spec_", getpid(), ".json");
    std::ofstream(spec_path_) << R"({"name": "quickstart", "models": ["m"]})";
  }
  void TearDown() override { server_->Shutdown(); }

  Result Run(std::vector<std::string> args, std::string scheduler_env = "") {
    std::ostringstream out, err;
    CliEnvironment env;
    env.out = &out;
    env.err = &err;
    env.scheduler_env = scheduler_env.empty() ? address_ : scheduler_env;
    const int code = RunCli(args, env);
    return {code, out.str(), err.str()};
  }

  static std::string LastLine(const std::string& text) {
    std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
    return lines.empty() ? "" : lines.back();
  }

  FakeClientService service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string address_;
  std::string spec_path_;
};

TEST_F(CliTest, SubmitPrintsTheExperimentIdLast) {
  Result r = Run({"submit", spec_path_, "--model", "m1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(LastLine(r.out), "exp_0123abcd");
  EXPECT_THAT(r.out, HasSubstr("submitted experiment 'quickstart'"));
  EXPECT_THAT(r.out, HasSubstr("12 trajectories"));
  const v1::SubmitExperimentRequest sent = service_.last_submit();
  EXPECT_EQ(sent.spec_path(), spec_path_);
  EXPECT_EQ(sent.spec_json(), R"({"name": "quickstart", "models": ["m"]})");
  EXPECT_EQ(sent.model(), "m1");
  EXPECT_FALSE(sent.dry_run());
}

// `pipeline check` reads the file and calls no scheduler: its stages and
// ids, or the one error that names the stage.
TEST_F(CliTest, PipelineCheckPrintsTheStagesOrTheMistake) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/cli_pipeline_", getpid(), ".json");
  std::ofstream(path) << R"({"name": "p", "stages": [
      {"name": "failed", "kind": "select", "experiments": ["base"], "rows": "failed"},
      {"name": "repairs", "kind": "derive", "from": "failed", "model": "m", "prompt_tag": "t"}]})";
  Result r = Run({"pipeline", "check", path}, "unreachable:1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("pipeline p (" + path + "): 2 stages, wired correctly"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("repairs +derive +failed +an experiment +st_[0-9a-f]{20}"));
  std::ofstream(path) << R"({"name": "p", "stages": [
      {"name": "repairs", "kind": "derive", "from": "failed", "model": "m", "prompt_tag": "t"}]})";
  r = Run({"pipeline", "check", path}, "unreachable:1");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("$.stages[0].from: expected the name of an earlier stage, found "
                               "\"failed\"; no stage has that name"));
}

TEST_F(CliTest, SubmitJson) {
  // The global flag after the command, --flag=value form, and the address by flag.
  Result r = Run({"submit", spec_path_, "--output=json", "--scheduler", address_}, "unused:1");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["experiment"], "exp_0123abcd");
  EXPECT_EQ(j["created"], true);
  EXPECT_EQ(j["trajectories"], 12);
}

TEST_F(CliTest, SubmitSameSpecAgainCreatesNothing) {
  service_.set_created(false);
  Result r = Run({"submit", spec_path_});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("experiment quickstart already exists with the same spec; nothing "
                               "new created"));
  EXPECT_EQ(LastLine(r.out), "exp_0123abcd");
  r = Run({"--output", "json", "submit", spec_path_});
  EXPECT_EQ(nlohmann::json::parse(r.out)["created"], false);
}

TEST_F(CliTest, SubmitErrors) {
  Result r = Run({"submit", "/nonexistent/spec.json"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "ptxbench: cannot read spec file '/nonexistent/spec.json': No such file or "
            "directory\n");

  std::ofstream(spec_path_) << R"({"bad": 1})";
  r = Run({"submit", spec_path_});
  EXPECT_EQ(r.code, 1);  // the spec is wrong, not the command line
  EXPECT_EQ(r.err, absl::StrCat("ptxbench: ", spec_path_, ": field 'bad': not allowed\n"));

  r = Run({"submit"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("needs SPEC.json"));
  r = Run({"submit", spec_path_, "--frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "ptxbench: unknown flag --frobnicate for 'ptxbench submit' (see 'ptxbench "
            "submit --help')\n");
}

TEST_F(CliTest, UnreachableSchedulerIsOneClearLine) {
  const std::string closed = absl::StrCat("127.0.0.1:", testing::UnusedPort());
  Result r = Run({"status", "--scheduler", closed, "--timeout", "2"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, absl::StrCat("ptxbench: cannot reach scheduler at ", closed,
                                " (is it running? start one with 'ptxbench up')\n"));
  r = Run({"submit", spec_path_, "--timeout=2"}, closed);  // address from the environment
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot reach scheduler at " + closed));
}

TEST_F(CliTest, StatusJsonOfOneExperiment) {
  Result r = Run({"status", "exp_0123abcd", "--output", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["experiment"], "exp_0123abcd");
  EXPECT_EQ(j["trajectories"]["by_state"]["AWAITING_MODEL"], 4);

  r = Run({"status", "exp_missing"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "ptxbench: no experiment 'exp_missing'\n");
}

TEST_F(CliTest, WatchWithoutTerminalPrintsOneLinePerUpdate) {
  Result r = Run({"status", "exp_0123abcd", "--watch"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_THAT(lines[0], HasSubstr("exp_0123abcd 2/4 (50%) finished"));
  EXPECT_THAT(lines[1], HasSubstr("4/4 (100%) finished"));
  EXPECT_THAT(lines[1], HasSubstr("done"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);  // no ANSI escapes off a terminal

  r = Run({"status", "exp_0123abcd", "--watch", "--output", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(lines[1])["finished"], true);
  EXPECT_EQ(nlohmann::json::parse(lines[1])["name"], "quickstart");

  r = Run({"status", "--watch"});
  EXPECT_EQ(r.code, 2);
}

TEST_F(CliTest, CtrlCEndsTheWatchWithExitZero) {
  InstallInterruptHandlers();  // before the signal can arrive
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGINT);
  });
  const auto start = std::chrono::steady_clock::now();
  Result r = Run({"status", fakes::kSlowExperimentId, "--watch"});
  interrupter.join();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("exp_slow 1/4 (25%) finished"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Run({}).code, 2);
  EXPECT_EQ(Run({"frobnicate"}).code, 2);
  Result r = Run({"status", "--output", "yaml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "ptxbench: --output must be 'table', 'json' or 'csv', got 'yaml'\n");
  r = Run({"status", "--output", "csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "ptxbench: --output csv is for 'report' only (export writes csv files with --format)\n");
  EXPECT_EQ(Run({"cancel", "abc"}).code, 2);
  EXPECT_EQ(Run({"retry", "exp_1", "--failed", "sometimes"}).code, 2);
  EXPECT_EQ(Run({"extend", "exp_1", "--turns", "zero"}).code, 2);
  EXPECT_EQ(Run({"list", "exp_1", "--state", "sleeping"}).code, 2);
  EXPECT_EQ(Run({"up", "--exit-when-done"}).code, 2);
}

TEST_F(CliTest, HelpExitsZero) {
  Result r = Run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("commands:"));
  r = Run({"submit", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: ptxbench submit SPEC.json"));
  EXPECT_THAT(r.out, HasSubstr("--dry-run"));
  r = Run({"help", "up"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("--exit-when-done"));
}

TEST_F(CliTest, UnimplementedRpcIsAFailureNotAUsageError) {
  Result r = Run({"drain", "exec-1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("ptxbench: "));
}

}  // namespace
}  // namespace ptxbench::cli

namespace ptxbench::cli {
namespace {

// `prompts render|check --architectures`: what an experiment for those GPUs
// would send, and which tags its submit would refuse; no scheduler needed.
TEST_F(CliTest, PromptsForTheArchitecturesNamed) {
  Result r = Run({"prompts", "render", "ptxb-no-hint", "--language", "ptx", "--architectures",
                  "sm_100"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NVIDIA\nBlackwell GPUs (B200, compute capability 10.0"));
  EXPECT_THAT(r.out, HasSubstr("`ptxas -arch=sm_100a -v`"));
  r = Run({"prompts", "render", "ptxb-no-hint"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Hopper GPUs (H100 / H200, compute capability 9.0, compiled for "
                               "sm_90a)"));

  r = Run({"prompts", "check", "--architectures", "blackwell"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ptxb-expert   REFUSED  prompt tag 'ptxb-expert' is written for "
                               "Hopper GPUs"));
  EXPECT_THAT(r.out, HasSubstr("ptxb-no-hint  OK"));
  // The Triton tag is judged as a Triton experiment would use it.
  EXPECT_THAT(r.out, HasSubstr("ptxb-triton   OK"));
  // ptxb-basic, ptxb-wgmma, ptxb-expert and ptxb-profile (built on
  // ptxb-basic) speak of Hopper.
  EXPECT_THAT(LastLine(r.out), HasSubstr("submit refuses 4 of them in an experiment for these "
                                         "GPUs (sm_100, sm_103)"));
  r = Run({"prompts", "render", "ptxb-triton", "--language", "triton"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# Submission format: Triton (a Python module, kernel.py)"));
  r = Run({"prompts", "render", "ptxb-triton", "--language", "tilelang"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--language must be one of cuda, ptx, solution, triton"));
  r = Run({"prompts", "check", "--architectures", "volta"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--architectures: 'volta' is neither a family"));
}

}  // namespace
}  // namespace ptxbench::cli
