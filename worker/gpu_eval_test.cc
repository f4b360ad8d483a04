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
                     bool* suspect, absl::Duration deadline = absl::Seconds(20),
                     bool memcheck = false, const std::string& source = "") {
    GpuEvalOptions o;
    if (memcheck) {
      // The memcheck gate (gpu_sanitize.cc) with a stand-in sanitizer: the
      // fake runner plays its runs too.
      o.sanitizer = "/fake/compute-sanitizer";
      o.sanitizer_root = "/fake";
      o.sanitizer_name = "compute-sanitizer 2025.3.0.0";
    }
    o.runner_path = runner;
    o.candidate_host_path = "/bin/true";  // the fake runner starts no host
    o.deadline = deadline;
    o.temp_root = dir_.string();
    GpuEvaluator evaluator(compiler_.get(), definitions_.get(), o, "w", "tk");
    v1::EvalRequest request;
    request.set_definition("gemm_n7168_k5120");
    request.set_language("cuda");
    request.set_kernel_sha256("abc");
    request.set_memcheck(memcheck);
    request.set_kernel_source(source);
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

// The memcheck gate (docs/MEASUREMENT.md, "The memcheck gate") with a fake
// runner that plays three kinds of job: a gate's sanitize run (print limit
// 1), a debug run (print limit 100), each writing `gate_log` / `debug_log`
// as compute-sanitizer's log beside its results, and the evaluation.
class MemcheckGateTest : public GpuEvalFakeRunnerTest {
 protected:
  std::string GatedRunner(const std::string& gate_log, const std::string& debug_log,
                          const std::string& evaluation) {
    std::ofstream(dir_ / "gate.log") << gate_log;
    std::ofstream(dir_ / "debug.log") << debug_log;
    return FakeRunner(
        "log=\"$(dirname \"$out\")/memcheck.log\"\n"
        "if grep -q '\"print_limit\":1,' \"$2\" && grep -q compute-sanitizer \"$2\"; then\n"
        "  cp \"$2\" " + (dir_ / "gate_job.json").string() + "\n"
        "  cp " + (dir_ / "gate.log").string() + " \"$log\"\n" +
        Emit(Trace(kM70, "PASSED")) +
        "elif grep -q '\"print_limit\":100,' \"$2\" && grep -q compute-sanitizer \"$2\"; then\n"
        "  cp " + (dir_ / "debug.log").string() + " \"$log\"\n" +
        Emit(Trace(kM70, "RUNTIME_ERROR")) +
        "else\n"
        "  touch " + (dir_ / "evaluated").string() + "\n" + evaluation +
        "fi\n");
  }
  static std::string Log(const std::string& body) {
    return "========= COMPUTE-SANITIZER\n" + body + "========= ERROR SUMMARY: 1 error\n";
  }
  static constexpr char kClean[] =
      "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n";
  static constexpr char kWrite[] =
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at gemm_kernel+0x90 in /tmp/ptxb-build-1/kernel.cu:3\n"
      "=========     by thread (0,0,0) in block (0,0,0)\n"
      "=========     Address 0x7f0000000400 is out of bounds\n"
      "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
      "=========         Host Frame: cuLaunchKernel [0x2c1a3e] in libcuda.so.1\n"
      "=========\n";
  static constexpr char kSource[] = "line 1\nline 2\nout[n] = v;  // line 3\nline 4\n";
};

TEST_F(MemcheckGateTest, ACleanGateLeavesTheEvaluationAsItWasAndReportsItsTimeApart) {
  bool suspect = true;
  v1::EvalResult r = Run(GatedRunner(kClean, kClean, Emit(Started(kM70)) +
                                                        Emit(Trace(kM70, "PASSED", 1.0))),
                         {kM70, kM232}, &suspect, absl::Seconds(20), /*memcheck=*/true);
  EXPECT_TRUE(fs::exists(dir_ / "evaluated"));
  EXPECT_EQ(r.memcheck().status(), v1::PASSED);
  EXPECT_EQ(r.memcheck().tool(), "compute-sanitizer 2025.3.0.0");
  EXPECT_EQ(r.memcheck().workload_uuid(), kM70);
  EXPECT_GE(r.memcheck().wall_time_ms(), 0);
  ASSERT_GE(r.traces_size(), 1);
  EXPECT_EQ(r.traces(0).status(), v1::PASSED);
  EXPECT_DOUBLE_EQ(r.traces(0).latency_ms(), 1.0);
  EXPECT_EQ(r.traces(0).log().rfind("memcheck gate: clean on workload ", 0), 0u) << r.traces(0).log();
  // The gate's job: one workload, two checked calls, print limit 1, nothing timed.
  std::ifstream in(dir_ / "gate_job.json");
  std::stringstream job;
  job << in.rdbuf();
  absl::StatusOr<runner::RunnerJob> parsed = runner::ParseJob(job.str());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->workloads.size(), 1u);
  EXPECT_EQ(parsed->trials, 2);
  EXPECT_EQ(parsed->warmup_calls, 0);
  EXPECT_EQ(parsed->sanitize.print_limit, 1);
  EXPECT_EQ(parsed->isolation.call_deadline_s, 120);
}

TEST_F(MemcheckGateTest, AReportStopsTheTurnUntimedWithTheDebugReportAndItsSourceAsTheLog) {
  bool suspect = false;
  v1::EvalResult r = Run(GatedRunner(Log(kWrite), Log(kWrite), Emit(Trace(kM70, "PASSED", 1.0))),
                         {kM70, kM232}, &suspect, absl::Seconds(20), /*memcheck=*/true, kSource);
  EXPECT_FALSE(fs::exists(dir_ / "evaluated")) << "a kernel that failed the gate was timed";
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_EQ(r.memcheck().status(), v1::RUNTIME_ERROR);
  EXPECT_EQ(r.memcheck().errors(), 1);
  EXPECT_TRUE(r.memcheck().debug_report());
  ASSERT_EQ(r.traces_size(), 2);
  EXPECT_EQ(r.traces(0).status(), v1::RUNTIME_ERROR);
  EXPECT_EQ(r.traces(0).latency_ms(), 0);
  const std::string& log = r.traces(0).log();
  EXPECT_NE(log.find("memcheck debug report"), std::string::npos) << log;
  EXPECT_NE(log.find("Invalid __global__ write of size 4 bytes"), std::string::npos) << log;
  EXPECT_NE(log.find(">     3 | out[n] = v;  // line 3"), std::string::npos) << log;
  EXPECT_EQ(log.find("Host Frame"), std::string::npos) << log;
  EXPECT_EQ(r.traces(1).status(), v1::RUNTIME_ERROR);
  EXPECT_NE(r.traces(1).errors(0).find("not run: the memcheck gate"), std::string::npos);
}

TEST_F(MemcheckGateTest, NoFinishedReportFromTheSanitizerIsNeverAPass) {
  bool suspect = false;
  v1::EvalResult r = Run(GatedRunner("", "", Emit(Trace(kM70, "PASSED", 1.0))), {kM70}, &suspect,
                         absl::Seconds(20), /*memcheck=*/true);
  EXPECT_FALSE(fs::exists(dir_ / "evaluated"));
  EXPECT_EQ(r.status(), v1::INFRA_ERROR);
  EXPECT_NE(r.error().find("compute-sanitizer wrote no finished report"), std::string::npos)
      << r.error();
}

TEST_F(MemcheckGateTest, AFaultInTheEvaluationGetsTheDebugReportAsItsLog) {
  bool suspect = false;
  v1::EvalResult r = Run(GatedRunner(kClean, Log(kWrite),
                                     Emit(Started(kM70)) + Emit(Trace(kM70, "RUNTIME_ERROR"))),
                         {kM70}, &suspect, absl::Seconds(20), /*memcheck=*/true, kSource);
  EXPECT_TRUE(fs::exists(dir_ / "evaluated"));
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_EQ(r.memcheck().status(), v1::PASSED);
  EXPECT_TRUE(r.memcheck().debug_report());
  ASSERT_EQ(r.traces_size(), 1);
  EXPECT_NE(r.traces(0).log().find("memcheck debug report"), std::string::npos) << r.traces(0).log();
}

TEST_F(MemcheckGateTest, NoGateUnlessTheRequestAsksForIt) {
  bool suspect = false;
  // Not asked: no gate and no memcheck result, though the log would fail it.
  v1::EvalResult r = Run(GatedRunner(Log(kWrite), Log(kWrite), Emit(Trace(kM70, "PASSED", 1.0))),
                         {kM70}, &suspect);
  EXPECT_EQ(r.status(), v1::PASSED);
  EXPECT_FALSE(r.has_memcheck());
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
