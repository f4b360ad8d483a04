// GPU tests of full evaluation: the worker's
// GpuEvaluator builds each test kernel (worker/testdata/gemm) and runs it in
// a sandboxed ptxbench-runner on GPU 0. Each test skips with "no CUDA GPU:
// ..." where there is none.

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "results/eval_text.h"
#include "testing/child_process.h"
#include "testing/require_gpu.h"
#include "worker/gpu_eval.h"
#include "worker/profile/ncu_install.h"
#include "worker/profile/testing/node_ncu.h"
#include "workloads/registry.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kGemm[] = "gemm_n7168_k5120";
constexpr char kGemmM70[] = "729b8d2e-8307-57e0-b6f5-d50957348534";
constexpr char kGemmM232[] = "6107c207-8a86-5a8e-a866-72bd92d4f8f7";

// For a look with Nsight Compute itself (bench/gpu/profile_check.sh).
void KeepReport(const v1::EvalResult& r, const std::string& name) {
  if (const char* keep = std::getenv("PTXB_KEEP_REPORTS")) {
    ASSERT_TRUE(WriteFile(absl::StrCat(keep, "/", name, ".ncu-rep"), r.profile().report()).ok());
  }
}

class GpuEvalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PTXB_REQUIRE_GPU();
    auto registry = workloads::DefinitionRegistry::Load({});
    ASSERT_TRUE(registry.ok()) << registry.status();
    definitions_ = *std::move(registry);
    CompilerOptions c;
    c.abi_include_dir = DataDir() + "/worker/kernel_abi";
    cache_ = std::filesystem::temp_directory_path() / "ptxb_gpu_eval_test_cache";
    c.cache_dir = cache_.string();
    compiler_ = std::make_unique<Compiler>(c);
    auto inventory = gpu::DiscoverGpus();
    ASSERT_TRUE(inventory.ok() && !inventory->gpus.empty());
    gpu_ = inventory->gpus[0];
    ASSERT_FALSE(FindRunner().empty()) << "ptxbench-runner not found next to the test";
  }

  GpuEvaluator Evaluator(absl::Duration deadline = absl::Minutes(3),
                         const NcuInstall* profiler = nullptr,
                         absl::Duration reference_reuse = absl::ZeroDuration()) {
    GpuEvalOptions o;
    o.runner_path = FindRunner();
    o.census_builds = true;  // what these kernels ran is checked too
    o.deadline = deadline;
    o.reference_reuse = reference_reuse;
    if (profiler != nullptr) o.UseProfiler(*profiler);
    return GpuEvaluator(compiler_.get(), definitions_.get(), o, "test", "test-toolkit");
  }

  static v1::EvalRequest Request(const std::string& kernel_file) {
    v1::EvalRequest r;
    r.set_definition(kGemm);
    r.set_language("cuda");
    r.set_kernel_source(ReadFile(DataDir() + "/worker/testdata/gemm/" + kernel_file).value_or(""));
    r.set_kernel_sha256(Sha256Hex(r.kernel_source()));
    r.set_mode(v1::FULL);
    r.add_workload_uuids(kGemmM70);
    return r;
  }

  v1::EvalResult Eval(const std::string& kernel_file, bool* suspect,
                      absl::Duration deadline = absl::Minutes(3)) {
    GpuEvaluator evaluator = Evaluator(deadline);
    v1::EvalResult r = evaluator.Evaluate(Request(kernel_file), gpu_, suspect);
    std::cout << kernel_file << ": " << v1::EvalStatus_Name(r.status());
    for (const v1::WorkloadTrace& t : r.traces()) {
      std::cout << " | " << t.workload_uuid() << " " << v1::EvalStatus_Name(t.status())
                << " latency " << t.latency_ms() << " ms, reference " << t.reference_latency_ms()
                << " ms, speedup " << t.speedup() << ", max abs " << t.max_abs_error();
      for (const std::string& e : t.errors()) std::cout << "\n    error: " << e;
      std::cout << "\n  log:\n" << t.log();
    }
    std::cout << "\n  wall " << r.wall_time_ms() << " ms\n";
    return r;
  }

  void ExpectHealthyAndPassing() {
    EXPECT_TRUE(Evaluator().CheckHealth(gpu_.index).ok());
    bool suspect = false;
    v1::EvalResult r = Eval("correct.cu", &suspect);
    EXPECT_EQ(r.status(), v1::PASSED);
    EXPECT_FALSE(suspect);
  }

  std::unique_ptr<workloads::DefinitionRegistry> definitions_;
  std::filesystem::path cache_;
  std::unique_ptr<Compiler> compiler_;
  gpu::GpuInfo gpu_;
};

TEST_F(GpuEvalTest, CorrectKernelPassesWithTimesAndRoofline) {
  bool suspect = true;
  v1::EvalResult r = Eval("correct.cu", &suspect);
  ASSERT_EQ(r.status(), v1::PASSED) << r.DebugString();
  EXPECT_TRUE(r.all_passed());
  EXPECT_FALSE(suspect);
  ASSERT_EQ(r.traces_size(), 1);
  const v1::WorkloadTrace& t = r.traces(0);
  EXPECT_GT(t.latency_ms(), 0);
  EXPECT_GT(t.reference_latency_ms(), 0);
  EXPECT_NEAR(t.speedup(), t.reference_latency_ms() / t.latency_ms(), 1e-9);
  EXPECT_DOUBLE_EQ(r.min_speedup(), t.speedup());
  EXPECT_EQ(t.matched_ratio(), 1.0);
  EXPECT_LE(t.max_abs_error(), 2.0);  // a bf16 step is 1 for |C| in [128, 256), 2 above
  EXPECT_EQ(r.gpu_model(), gpu_.name);
  // The census: every timed call seen, its one kernel the build's own.
  std::cout << "census: " << t.census().ShortDebugString() << "\n";
  EXPECT_GT(t.census().calls_timed(), 0);
  EXPECT_EQ(t.census().calls_seen(), t.census().calls_timed());
  EXPECT_TRUE(t.census().gap().empty()) << t.census().gap();
  ASSERT_EQ(t.census().kernels_size(), 1) << t.census().ShortDebugString();
  EXPECT_EQ(t.census().kernels(0).origin(), v1::SUBMISSION);
  EXPECT_EQ(t.census().kernels(0).launches(), t.census().calls_seen());
  // A plain CUDA GEMM: SASS listed, no Hopper family in it.
  ASSERT_TRUE(r.has_sass()) << r.compile_log();
  EXPECT_GT(r.sass().instructions(), 0);
  EXPECT_TRUE(r.sass().architecture_counts().empty()) << r.sass().ShortDebugString();
  if (gpu_.name.find("H100") != std::string::npos || gpu_.name.find("H200") != std::string::npos) {
    EXPECT_GT(t.roofline_fraction(), 0);
    EXPECT_LT(t.roofline_fraction(), 1);
  }
}

// The reference figures the first evaluation timed serve the next ones on
// the same GPU, all but the oldest, which each run times again (the drift
// check): with two workloads the second evaluation times M=70's reference
// and reuses M=232's. Every trace says which it got. An evaluator told not
// to reuse times both.
TEST_F(GpuEvalTest, ALaterEvaluationReusesReferenceFiguresButTheOldest) {
  GpuEvaluator reusing = Evaluator(absl::Minutes(3), nullptr, absl::Minutes(10));
  v1::EvalRequest request = Request("correct.cu");
  request.add_workload_uuids(kGemmM232);
  bool suspect = false;
  const v1::EvalResult first = reusing.Evaluate(request, gpu_, &suspect);
  const v1::EvalResult second = reusing.Evaluate(request, gpu_, &suspect);
  ASSERT_EQ(first.status(), v1::PASSED) << first.DebugString();
  ASSERT_EQ(second.status(), v1::PASSED) << second.DebugString();
  ASSERT_EQ(first.traces_size(), 2);
  ASSERT_EQ(second.traces_size(), 2);
  std::cout << "first:\n" << first.traces(1).log() << "second:\n" << second.traces(1).log();
  for (const v1::WorkloadTrace& t : first.traces()) {
    EXPECT_THAT(t.log(), HasSubstr("[2 timed here]"));
    EXPECT_THAT(t.log(), Not(HasSubstr("earlier evaluation")));
  }
  // Both traces of the second run carry the set-up line of the run.
  for (const v1::WorkloadTrace& t : second.traces()) {
    EXPECT_THAT(t.log(), HasSubstr("[1 timed here, 1 from an earlier run]"));
  }
  const v1::WorkloadTrace& m70 = second.traces(0);
  const v1::WorkloadTrace& m232 = second.traces(1);
  EXPECT_THAT(m70.log(), Not(HasSubstr("reference figure measured by an earlier evaluation")));
  EXPECT_NE(m70.reference_latency_ms(), first.traces(0).reference_latency_ms());
  EXPECT_THAT(m232.log(), HasSubstr("reference figure measured by an earlier evaluation on this GPU"));
  EXPECT_THAT(m232.log(), HasSubstr("reference cuBLAS trial 0"));  // the first's own lines
  EXPECT_DOUBLE_EQ(m232.reference_latency_ms(), first.traces(1).reference_latency_ms());
  EXPECT_NEAR(m232.speedup(), m232.reference_latency_ms() / m232.latency_ms(), 1e-9);

  const v1::EvalResult third = Evaluator().Evaluate(request, gpu_, &suspect);
  ASSERT_EQ(third.status(), v1::PASSED);
  EXPECT_THAT(third.traces(1).log(), HasSubstr("[2 timed here]"));
  EXPECT_NE(third.traces(1).reference_latency_ms(), first.traces(1).reference_latency_ms());
}

// A Slurm scancel sends SIGTERM to every process of the worker's job step:
// the runner and its hosts must go on, so that the worker's drain finishes
// the measurement as the kernel's own result (a scancel in the Slurm test on
// the H200 made a wrong answer's evaluation a RUNTIME_ERROR before they
// ignored the stop signals). The build is done first: nvcc ends at SIGTERM
// whatever it inherits, which the worker's StopSignalGuard answers by
// handing back.
TEST_F(GpuEvalTest, StopSignalsToTheWholeTreeDoNotEndAMeasurement) {
  GpuEvaluator evaluator = Evaluator();
  v1::EvalRequest request = Request("correct.cu");
  request.add_architectures(gpu_.sm_arch);
  CompiledKernel compiled = evaluator.Compile(request);
  ASSERT_TRUE(compiled.built());
  // As an executor does (daemon/stop_signals.h): its threads block them.
  sigset_t stop, before;
  sigemptyset(&stop);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&stop, sig);
  pthread_sigmask(SIG_BLOCK, &stop, &before);
  std::atomic<bool> done = false;
  std::atomic<int> sent = 0;
  std::thread signaller([&] {
    while (!done) {
      for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
        sent += ::ptxbench::testing::SignalDescendants(getpid(), sig);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  bool suspect = true;
  v1::EvalResult r = evaluator.Run(request, std::move(compiled), gpu_, &suspect);
  done = true;
  signaller.join();
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  EXPECT_EQ(r.status(), v1::PASSED) << r.DebugString();
  EXPECT_FALSE(suspect);
  EXPECT_GT(sent.load(), 20) << "the measurement's processes were not signalled";
}

TEST_F(GpuEvalTest, ATvmFfiTmaGemmPassesUnchangedOnEveryWorkload) {
  // A kernel in the TVM-FFI style of FlashInfer-Bench / PTXBench, feeding
  // shared memory by TMA (driver-API tensor maps): as written, every workload.
  v1::EvalRequest request;
  request.set_definition(kGemm);
  request.set_language("cuda");
  request.set_kernel_source(
      ReadFile(DataDir() + "/worker/testdata/tvm_ffi/tma_gemm.cu").value_or(""));
  request.set_kernel_sha256(Sha256Hex(request.kernel_source()));
  request.set_mode(v1::FULL);
  bool suspect = true;
  v1::EvalResult r = Evaluator(absl::Minutes(8)).Evaluate(request, gpu_, &suspect);
  for (const v1::WorkloadTrace& t : r.traces()) {
    std::cout << "tma_gemm.cu | " << t.workload_uuid() << " " << v1::EvalStatus_Name(t.status())
              << " latency " << t.latency_ms() << " ms, reference " << t.reference_latency_ms()
              << " ms, max abs " << t.max_abs_error() << "\n";
  }
  ASSERT_EQ(r.status(), v1::PASSED) << r.compile_log() << r.error();
  EXPECT_EQ(r.traces_size(), 5);
  EXPECT_FALSE(suspect);
  EXPECT_GT(r.ptx().instruction_counts().at("cp.async.bulk."), 0);
  // What the GPU runs: the SASS has the TMA loads and transaction barriers.
  ASSERT_TRUE(r.has_sass()) << "cuobjdump listed no SASS: " << r.compile_log();
  std::cout << "tma_gemm.cu SASS: " << r.sass().ShortDebugString() << "\n";
  EXPECT_GT(r.sass().instruction_counts().at("UTMALDG"), 0);
  EXPECT_GT(r.sass().architecture_counts().at("hopper"), 0);
}

// The TVM-FFI TMA GEMM under the profiler: its own kernel, the TMA loads
// not hidden from Nsight Compute by the harness.
TEST_F(GpuEvalTest, ATvmFfiTmaGemmIsProfiledLikeAnyKernel) {
  absl::StatusOr<NcuInstall> ncu = FindNcu(NodeNcuPath());
  if (!ncu.ok()) GTEST_SKIP() << "no Nsight Compute here: " << ncu.status();
  v1::EvalRequest request = Request("correct.cu");
  request.set_kernel_source(
      ReadFile(DataDir() + "/worker/testdata/tvm_ffi/tma_gemm.cu").value_or(""));
  request.set_kernel_sha256(Sha256Hex(request.kernel_source()));
  request.set_profile(true);
  bool suspect = true;
  v1::EvalResult r = Evaluator(absl::Minutes(5), &*ncu).Evaluate(request, gpu_, &suspect);
  ASSERT_EQ(r.status(), v1::PASSED) << r.compile_log() << r.error();
  std::cout << "tma_gemm.cu latency " << r.traces(0).latency_ms() << " ms\n"
            << RenderProfile(r.profile(), 8) << "wall " << r.profile().wall_time_ms() << " ms\n";
  ASSERT_EQ(r.profile().status(), v1::PASSED) << r.profile().error();
  ASSERT_GT(r.profile().kernels_size(), 0);
  EXPECT_NE(r.profile().kernels(0).name().find("GemmKernel"), std::string::npos)
      << r.profile().kernels(0).name();
  EXPECT_GT(r.profile().kernels(0).duration_us(), 0);
  KeepReport(r, "tvm_ffi_tma_gemm");
}

TEST_F(GpuEvalTest, RawPtxKernelRunsThroughItsLaunchSpecAndPasses) {
  v1::EvalRequest r = Request("correct.ptx");
  r.set_language("ptx");
  bool suspect = true;
  v1::EvalResult result = Evaluator().Evaluate(r, gpu_, &suspect);
  for (const v1::WorkloadTrace& t : result.traces()) {
    for (const std::string& e : t.errors()) std::cout << "  error: " << e << "\n";
    std::cout << t.log();
  }
  ASSERT_EQ(result.status(), v1::PASSED) << result.compile_log();
  EXPECT_GT(result.traces(0).latency_ms(), 0);
  EXPECT_FALSE(suspect);
  // A module the host loads itself: its kernel seen, and the submission's.
  const v1::KernelCensus& census = result.traces(0).census();
  ASSERT_GT(census.kernels_size(), 0) << census.ShortDebugString();
  EXPECT_EQ(census.kernels(0).origin(), v1::SUBMISSION) << census.ShortDebugString();
}

TEST_F(GpuEvalTest, SkippedOutputStaysPoisonedAndFails) {
  bool suspect = true;
  v1::EvalResult r = Eval("skip_rows.cu", &suspect);
  EXPECT_EQ(r.status(), v1::INCORRECT_NUMERICAL);
  EXPECT_NE(r.traces(0).errors(0).find("NaN"), std::string::npos) << r.traces(0).errors(0);
}

TEST_F(GpuEvalTest, WritingAnInputFails) {
  bool suspect = true;
  v1::EvalResult r = Eval("writes_input.cu", &suspect);
  EXPECT_EQ(r.status(), v1::INCORRECT_NUMERICAL);
  EXPECT_NE(r.traces(0).errors(0).find("input A was modified"), std::string::npos)
      << r.traces(0).errors(0);
}

TEST_F(GpuEvalTest, CachingResultsAcrossCallsDoesNotPay) {
  bool suspect = true;
  v1::EvalResult r = Eval("caches.cu", &suspect);
  EXPECT_EQ(r.status(), v1::INCORRECT_NUMERICAL);
  EXPECT_EQ(r.min_speedup(), 0);
  EXPECT_EQ(r.traces(0).latency_ms(), 0);
}

TEST_F(GpuEvalTest, WorkOnAnotherStreamNeverEscapesTheMeasurement) {
  // Work on a stream of its own, never joined to the call's stream: its
  // outputs are checked as soon as the call's own work ended, so it fails
  // whenever the side work is late, and is never measured faster.
  bool suspect = true;
  v1::EvalResult same = Eval("correct.cu", &suspect);
  v1::EvalResult side = Eval("side_stream.cu", &suspect);
  ASSERT_EQ(same.status(), v1::PASSED);
  if (side.status() == v1::PASSED) {
    const double ratio = side.traces(0).latency_ms() / same.traces(0).latency_ms();
    EXPECT_GT(ratio, 0.8) << "side-stream work escaped the measurement";
  } else {
    EXPECT_EQ(side.status(), v1::INCORRECT_NUMERICAL);
  }
}

TEST_F(GpuEvalTest, SegfaultIsRuntimeErrorAndTheGpuStaysUsable) {
  bool suspect = false;
  v1::EvalResult r = Eval("segfault.cu", &suspect);
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_NE(r.traces(0).errors(0).find("signal 11"), std::string::npos) << r.traces(0).errors(0);
  EXPECT_TRUE(suspect);
  ExpectHealthyAndPassing();
}

TEST_F(GpuEvalTest, IllegalAddressIsRuntimeErrorAndTheGpuStaysUsable) {
  bool suspect = false;
  const absl::Time start = absl::Now();
  v1::EvalResult r = Eval("illegal_address.cu", &suspect);
  // The harness ends as soon as it has reported: it does not wait for the
  // broken context's stream until the deadline (3 minutes).
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_NE(r.traces(0).errors(0).find("illegal"), std::string::npos) << r.traces(0).errors(0);
  EXPECT_TRUE(suspect);
  ExpectHealthyAndPassing();
}

TEST_F(GpuEvalTest, NeverReturningKernelIsTimeoutAndTheGpuStaysUsable) {
  bool suspect = false;
  v1::EvalResult r = Eval("hang.cu", &suspect, absl::Seconds(20));
  EXPECT_EQ(r.status(), v1::TIMEOUT);
  EXPECT_TRUE(suspect);
  ExpectHealthyAndPassing();
}

// Per bundled definition: a simple correct kernel written for the test
// passes, and the same kernel with one output element off by 100 fails.
struct DefinitionCase {
  const char* definition;
  const char* kernel;    // under worker/testdata
  const char* workload;  // the smallest workload
  int timed_calls;       // the simple attention kernels are slow: fewer calls
};

class PerDefinitionTest : public GpuEvalTest,
                          public ::testing::WithParamInterface<DefinitionCase> {
 protected:
  v1::EvalResult EvalSource(const std::string& source, const NcuInstall* profiler = nullptr) {
    const DefinitionCase& c = GetParam();
    GpuEvalOptions o;
    o.runner_path = FindRunner();
    // The census's cost on the figures: the same kernels' trial lines with
    // PTXBENCH_TEST_CENSUS_OFF set and without (scripts/device/census_cost.sh).
    o.census_builds = std::getenv("PTXBENCH_TEST_CENSUS_OFF") == nullptr;
    if (profiler != nullptr) o.UseProfiler(*profiler);
    o.deadline = absl::Minutes(5);
    o.trials = c.timed_calls < 50 ? 1 : 0;
    o.warmup_calls = c.timed_calls < 50 ? 1 : 10;
    o.timed_calls = c.timed_calls;
    GpuEvaluator evaluator(compiler_.get(), definitions_.get(), o, "test", "test-toolkit");
    v1::EvalRequest r;
    r.set_definition(c.definition);
    r.set_language("cuda");
    r.set_kernel_source(source);
    r.set_kernel_sha256(Sha256Hex(source));
    r.set_mode(v1::FULL);
    r.add_workload_uuids(c.workload);
    r.set_profile(profiler != nullptr);
    bool suspect = false;
    v1::EvalResult result = evaluator.Evaluate(r, gpu_, &suspect);
    std::cout << c.definition << ": " << v1::EvalStatus_Name(result.status()) << "\n";
    for (const v1::WorkloadTrace& t : result.traces()) {
      for (const std::string& e : t.errors()) std::cout << "  error: " << e << "\n";
      std::cout << t.log();
    }
    if (result.status() == v1::COMPILE_ERROR) std::cout << result.compile_log();
    return result;
  }
  std::string Source() { return ReadFile(DataDir() + "/worker/testdata/" + GetParam().kernel).value_or(""); }
};

TEST_P(PerDefinitionTest, SimpleCorrectKernelPasses) {
  v1::EvalResult r = EvalSource(Source());
  ASSERT_EQ(r.status(), v1::PASSED);
  EXPECT_GT(r.traces(0).speedup(), 0);
}

// Profiles (docs/MEASUREMENT.md, "Profiles"): Nsight Compute in the
// candidate's sandbox names the kernel and where its time went; the
// evaluation's own figures are those of an unprofiled run.
TEST_P(PerDefinitionTest, AProfileNamesTheKernelAndWhereItsTimeWent) {
  absl::StatusOr<NcuInstall> ncu = FindNcu(NodeNcuPath());
  if (!ncu.ok()) GTEST_SKIP() << "no Nsight Compute here: " << ncu.status();
  v1::EvalResult r = EvalSource(Source(), &*ncu);
  ASSERT_EQ(r.status(), v1::PASSED);
  ASSERT_TRUE(r.has_profile());
  std::cout << RenderProfile(r.profile(), 8) << "wall " << r.profile().wall_time_ms() << " ms\n";
  ASSERT_EQ(r.profile().status(), v1::PASSED) << r.profile().error();
  ASSERT_GT(r.profile().kernels_size(), 0);
  EXPECT_GT(r.profile().kernels(0).duration_us(), 0);
  EXPECT_GE(r.profile().kernels(0).sm_throughput_pct(), 0);
  EXPECT_GT(r.profile().report().size(), 0u);
  EXPECT_EQ(r.profile().workload_uuid(), GetParam().workload);
  KeepReport(r, GetParam().definition);
}

TEST_P(PerDefinitionTest, OneWrongElementIsIncorrectNumerical) {
  std::string source = Source();
  const size_t marker = source.find("// PTXB_TEST_SPOIL");
  ASSERT_NE(marker, std::string::npos) << "the test kernel lacks its spoil marker";
  auto definition = definitions_->Find(GetParam().definition);
  ASSERT_TRUE(definition.ok());
  const std::string first_output = (*definition)->outputs[0].name;
  source.replace(marker, std::string("// PTXB_TEST_SPOIL").size(),
                 "ptxb_test_spoil<<<1, 1, 0, stream>>>((__nv_bfloat16*)" + first_output + ".data);");
  source.insert(source.find("PTXB_EXPORT"),
                "__global__ void ptxb_test_spoil(__nv_bfloat16* p) {\n"
                "  p[0] = __float2bfloat16(__bfloat162float(p[0]) + 100.f);\n}\n\n");
  v1::EvalResult r = EvalSource(source);
  EXPECT_EQ(r.status(), v1::INCORRECT_NUMERICAL);
  ASSERT_EQ(r.traces_size(), 1);
  ASSERT_GT(r.traces(0).errors_size(), 0);
  EXPECT_NE(r.traces(0).errors(0).find("first at index 0"), std::string::npos)
      << r.traces(0).errors(0);
  EXPECT_LT(r.traces(0).matched_ratio(), 1.0);
  EXPECT_GT(r.traces(0).matched_ratio(), 0.999);
}

INSTANTIATE_TEST_SUITE_P(
    Bundled, PerDefinitionTest,
    ::testing::Values(
        DefinitionCase{"gemm_n7168_k5120", "gemm/correct.cu", kGemmM70, 50},
        DefinitionCase{"mha_with_lse_d128", "attention/mha_with_lse_d128.cu",
                       "b1925b19-c151-5d55-be56-d03303b7ae2c", 3},
        DefinitionCase{"mha_with_lse_d128_causal", "attention/mha_with_lse_d128_causal.cu",
                       "36ff68ec-a941-50dc-a29a-a477f26831de", 3},
        DefinitionCase{"mha_bwd_d128", "attention/mha_bwd_d128.cu",
                       "a7c1f029-8449-5918-86d6-c4aa45421654", 3},
        DefinitionCase{"mha_bwd_d128_causal", "attention/mha_bwd_d128_causal.cu",
                       "e87fcc6a-48cc-54eb-9c79-43e6d9d5be96", 3}),
    [](const ::testing::TestParamInfo<DefinitionCase>& info) {
      return std::string(info.param.definition);
    });

}  // namespace
}  // namespace ptxbench::worker
