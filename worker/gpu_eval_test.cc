// CPU tests of the worker side of GPU evaluation (gpu_eval.h, gpu_worker.h):
// a shell script stands in for ptxbench-runner, so the way results, crashes,
// hangs and lost CUDA contexts turn into an EvalResult is tested everywhere.
#include "worker/gpu_eval.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "worker/gpu_worker.h"
#include "workloads/registry.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;
namespace fs = std::filesystem;

constexpr char kM70[] = "729b8d2e-8307-57e0-b6f5-d50957348534";
constexpr char kM232[] = "6107c207-8a86-5a8e-a866-72bd92d4f8f7";

std::string Trace(const std::string& uuid, const std::string& status, double latency = 0) {
  std::ostringstream s;
  s << R"({"trace": {"workloadUuid": ")" << uuid << R"(", "status": ")" << status
    << R"(", "latencyMs": )" << latency << R"(, "referenceLatencyMs": )" << 2 * latency
    << R"(, "speedup": )" << (latency > 0 ? 2 : 0) << "}}";
  return s.str();
}

std::string Started(const std::string& uuid) { return R"({"started": ")" + uuid + R"("})"; }

class GpuEvalFakeRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("ptxb_fake_runner_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto registry = workloads::DefinitionRegistry::Load({});
    ASSERT_TRUE(registry.ok()) << registry.status();
    definitions_ = *std::move(registry);
    compiler_ = std::make_unique<Compiler>(CompilerOptions{});
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A runner that copies its job to DIR/job.json, then runs `body` (sh) in
  // its private directory, where it appends to results.jsonl.
  std::string FakeRunner(const std::string& body) {
    const fs::path path = dir_ / ("runner" + std::to_string(runners_++) + ".sh");
    std::ofstream(path) << "#!/bin/sh\ncp \"$2\" " << (dir_ / "job.json") << "\nout=\"$4\"\n"
                        << body << "\n";
    chmod(path.c_str(), 0755);
    return path.string();
  }
  static std::string Emit(const std::string& line) { return "echo '" + line + "' >> \"$out\"\n"; }

  v1::EvalResult Run(const std::string& runner, std::vector<std::string> workloads,
                     bool* suspect, absl::Duration deadline = absl::Seconds(20)) {
    GpuEvalOptions o;
    o.runner_path = runner;
    o.candidate_host_path = "/bin/true";  // the fake runner starts no host
    o.deadline = deadline;
    o.temp_root = dir_.string();
    GpuEvaluator evaluator(compiler_.get(), definitions_.get(), o, "w", "tk");
    v1::EvalRequest request;
    request.set_definition("gemm_n7168_k5120");
    request.set_language("cuda");
    request.set_kernel_sha256("abc");
    for (const std::string& w : workloads) request.add_workload_uuids(w);
    CompiledKernel compiled;
    compiled.result.set_status(v1::COMPILED);
    compiled.definition = *definitions_->Find("gemm_n7168_k5120");
    compiled.artifact = (dir_ / "kernel.so").string();
    compiled.start = absl::Now();
    gpu::GpuInfo gpu;
    gpu.name = "Fake GPU";
    return evaluator.Run(request, std::move(compiled), gpu, suspect);
  }

  fs::path dir_;
  int runners_ = 0;
  std::unique_ptr<workloads::DefinitionRegistry> definitions_;
  std::unique_ptr<Compiler> compiler_;
};

TEST_F(GpuEvalFakeRunnerTest, AllTracesPassedGiveAPassWithTheLowestSpeedup) {
  bool suspect = true;
  v1::EvalResult r = Run(FakeRunner(Emit(Started(kM70)) + Emit(Trace(kM70, "PASSED", 1.0)) +
                                    Emit(Started(kM232)) + Emit(Trace(kM232, "PASSED", 4.0))),
                         {kM70, kM232}, &suspect);
  EXPECT_EQ(r.status(), v1::PASSED);
  EXPECT_TRUE(r.all_passed());
  EXPECT_FALSE(suspect);
  ASSERT_EQ(r.traces_size(), 2);
  EXPECT_DOUBLE_EQ(r.min_speedup(), 2.0);
  EXPECT_EQ(r.gpu_model(), "Fake GPU");
  // The job names exactly the requested workloads, with every axis value.
  std::ifstream job(dir_ / "job.json");
  std::stringstream text;
  text << job.rdbuf();
  EXPECT_NE(text.str().find(kM70), std::string::npos);
  EXPECT_NE(text.str().find(kM232), std::string::npos);
  EXPECT_EQ(text.str().find("c8d11897"), std::string::npos) << "an unrequested workload ran";
  EXPECT_NE(text.str().find("\"N\":7168"), std::string::npos) << text.str();
}

TEST_F(GpuEvalFakeRunnerTest, CrashKeepsFinishedTracesAndBlamesTheWorkloadInProgress) {
  bool suspect = false;
  v1::EvalResult r = Run(FakeRunner(Emit(Started(kM70)) + Emit(Trace(kM70, "PASSED", 1.0)) +
                                    Emit(Started(kM232)) + "kill -SEGV $$"),
                         {kM70, kM232}, &suspect);
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_FALSE(r.all_passed());
  EXPECT_EQ(r.min_speedup(), 0);
  EXPECT_TRUE(suspect);
  ASSERT_EQ(r.traces_size(), 2);
  EXPECT_EQ(r.traces(0).status(), v1::PASSED);
  EXPECT_EQ(r.traces(1).status(), v1::RUNTIME_ERROR);
  EXPECT_NE(r.traces(1).errors(0).find("signal 11"), std::string::npos) << r.traces(1).errors(0);
}

TEST_F(GpuEvalFakeRunnerTest, LostContextStopsTheRunAndLaterWorkloadsAreNotRun) {
  bool suspect = false;
  v1::EvalResult r = Run(FakeRunner(Emit(Started(kM70)) + Emit(Trace(kM70, "RUNTIME_ERROR")) +
                                    "exit 3"),
                         {kM70, kM232}, &suspect);
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_TRUE(suspect);
  ASSERT_EQ(r.traces_size(), 2);
  EXPECT_EQ(r.traces(1).status(), v1::RUNTIME_ERROR);
  EXPECT_NE(r.traces(1).errors(0).find("not run"), std::string::npos) << r.traces(1).errors(0);
}

TEST_F(GpuEvalFakeRunnerTest, HangIsATimeoutOfTheWorkloadInProgress) {
  bool suspect = false;
  v1::EvalResult r = Run(FakeRunner(Emit(Started(kM70)) + "sleep 600"), {kM70, kM232}, &suspect,
                         absl::Seconds(1));
  EXPECT_EQ(r.status(), v1::TIMEOUT);
  EXPECT_TRUE(suspect);
  ASSERT_EQ(r.traces_size(), 2);
  EXPECT_EQ(r.traces(0).status(), v1::TIMEOUT);
  EXPECT_NE(r.traces(1).errors(0).find("not run"), std::string::npos);
}

TEST_F(GpuEvalFakeRunnerTest, CleanExitWithoutResultsIsAnInfrastructureError) {
  bool suspect = false;
  v1::EvalResult r = Run(FakeRunner("exit 0"), {kM70}, &suspect);
  EXPECT_EQ(r.status(), v1::INFRA_ERROR);
  EXPECT_FALSE(r.error().empty());
}

TEST_F(GpuEvalFakeRunnerTest, UnknownWorkloadIsRefusedBeforeAnythingRuns) {
  bool suspect = false;
  v1::EvalResult r = Run(FakeRunner(Emit(Trace(kM70, "PASSED", 1.0))), {kM70, "no-such-uuid"},
                         &suspect);
  EXPECT_EQ(r.status(), v1::INFRA_ERROR);
  EXPECT_NE(r.error().find("no-such-uuid"), std::string::npos) << r.error();
  EXPECT_FALSE(fs::exists(dir_ / "job.json")) << "the runner was started";
}

gpu::GpuInfo Gpu(int index, const std::string& sm_arch = "sm_90") {
  gpu::GpuInfo g;
  g.index = index;
  g.sm_arch = sm_arch;
  return g;
}

// An installation made under umask 077: the worker refuses to start, naming
// the file, rather than fail every build and run in the sandbox.
TEST(CheckSandboxCanReadTest, NamesTheFirstFileTheSandboxUidCannotRead) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: without it the sandbox runs as the worker's uid";
  const fs::path dir = fs::path(::testing::TempDir()) / ("ptxb_install_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "abi" / "ptxbench");
  fs::create_directories(dir / "bin");
  std::ofstream(dir / "abi" / "ptxbench" / "kernel_abi.h") << "// abi\n";
  for (const char* name : {"ptxbench-runner", "ptxbench-candidate-host", "libptxbench-host.so"}) {
    std::ofstream(dir / "bin" / name) << "x";
    chmod((dir / "bin" / name).c_str(), 0755);
  }
  std::ofstream(dir / "bin" / "torch_host.py") << "x";
  chmod((dir / "bin" / "torch_host.py").c_str(), 0644);
  CompilerOptions compiler;
  compiler.abi_include_dir = (dir / "abi").string();
  const std::string runner = (dir / "bin" / "ptxbench-runner").string();
  EXPECT_TRUE(CheckSandboxCanRead(compiler, runner, 65534).ok());

  chmod((dir / "abi" / "ptxbench" / "kernel_abi.h").c_str(), 0600);
  absl::Status s = CheckSandboxCanRead(compiler, runner, 65534);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("kernel_abi.h is not readable by the sandbox uid 65534 (mode 0600)"),
            std::string::npos) << s;
  EXPECT_NE(s.message().find("chmod -R a+rX " + compiler.abi_include_dir), std::string::npos) << s;
  // Its owner may: the sandbox uid's own file is fine whatever its mode.
  ASSERT_EQ(chown((dir / "abi" / "ptxbench" / "kernel_abi.h").c_str(), 65534, 65534), 0);
  EXPECT_TRUE(CheckSandboxCanRead(compiler, runner, 65534).ok());

  chmod((dir / "bin" / "ptxbench-candidate-host").c_str(), 0744);  // readable, not runnable
  s = CheckSandboxCanRead(compiler, runner, 65534);
  EXPECT_NE(s.message().find("ptxbench-candidate-host is not readable"), std::string::npos) << s;
  chmod((dir / "bin" / "ptxbench-candidate-host").c_str(), 0755);
  chmod((dir / "bin").c_str(), 0700);  // the host's directory is bound into its view
  s = CheckSandboxCanRead(compiler, runner, 65534);
  EXPECT_NE(s.message().find("bin is not readable"), std::string::npos) << s;
  chmod((dir / "bin").c_str(), 0755);
  EXPECT_TRUE(CheckSandboxCanRead(compiler, runner, 65534).ok());
  fs::remove_all(dir);
}

TEST(GpuPoolTest, OneTaskPerGpuAndReleaseWakesAWaiter) {
  GpuPool pool({Gpu(0)});
  std::atomic<bool> cancelled{false};
  ASSERT_TRUE(pool.Acquire(cancelled, "sm_90").has_value());
  std::atomic<bool> got{false};
  std::thread waiter([&] { got = pool.Acquire(cancelled, "sm_90").has_value(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(got.load()) << "two tasks on one GPU";
  pool.Release(0);
  waiter.join();
  EXPECT_TRUE(got.load());
}

TEST(GpuPoolTest, NoHealthyGpuOrCancelledGivesNothing) {
  GpuPool pool({Gpu(3)});
  std::atomic<bool> cancelled{false};
  ASSERT_TRUE(pool.Acquire(cancelled, "sm_90").has_value());
  std::atomic<bool> cancel_now{true};
  EXPECT_FALSE(pool.Acquire(cancel_now, "sm_90").has_value());
  pool.MarkUnhealthy(3);
  pool.Release(3);
  EXPECT_EQ(pool.healthy_count(), 0);
  EXPECT_FALSE(pool.Acquire(cancelled, "sm_90").has_value());
  EXPECT_EQ(pool.ArchitectureFor({"sm_90"}), "") << "an unhealthy GPU";
}

// A node with a Hopper and a Blackwell GPU: each task gets a GPU of an
// architecture it targets, never the other.
TEST(GpuPoolTest, GpusAreMatchedByArchitecture) {
  GpuPool pool({Gpu(0, "sm_100"), Gpu(1, "sm_90")});
  EXPECT_EQ(pool.ArchitectureFor({"sm_90"}), "sm_90");
  EXPECT_EQ(pool.ArchitectureFor({"sm_100", "sm_103"}), "sm_100");
  EXPECT_EQ(pool.ArchitectureFor({"sm_89"}), "");
  std::atomic<bool> cancelled{false};
  std::optional<gpu::GpuInfo> hopper = pool.Acquire(cancelled, "sm_90");
  ASSERT_TRUE(hopper.has_value());
  EXPECT_EQ(hopper->index, 1);
  EXPECT_EQ(pool.Acquire(cancelled, "sm_100")->index, 0);
  EXPECT_FALSE(pool.Acquire(cancelled, "sm_89").has_value()) << "no GPU of sm_89 at all";
}

}  // namespace
}  // namespace ptxbench::worker
