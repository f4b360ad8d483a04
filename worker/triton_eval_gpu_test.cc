// Triton candidates on the GPU (worker/runner/hosts/triton_host.py): a Triton
// kernel for each bundled definition (worker/testdata/triton) passes and is
// timed; Triton's JIT and autotuning run in a host of their own before
// anything is timed, so a kernel whose first call takes seconds reads as
// fast as the same kernel warm; a kernel Triton cannot compile is a
// COMPILE_ERROR, one whose run() raises a RUNTIME_ERROR naming its line.
// The candidate's Python is $PTXBENCH_TEST_TORCH_PYTHON, else python3 on
// PATH; it must import torch and triton. Each test skips, saying why, where
// there is no GPU or no such Python.

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "process/run.h"
#include "testing/require_gpu.h"
#include "worker/gpu_eval.h"
#include "worker/harness_process.h"
#include "workloads/registry.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;

constexpr char kGemmM70[] = "729b8d2e-8307-57e0-b6f5-d50957348534";

// A Python that imports torch and triton and sees a GPU, or why there is none.
struct TritonPython {
  std::string python;
  std::string why_not;
};

const TritonPython& FindTritonPython() {
  static const TritonPython* found = [] {
    auto* t = new TritonPython;
    const char* env = std::getenv("PTXBENCH_TEST_TORCH_PYTHON");
    t->python = env != nullptr ? env : "/usr/bin/python3";
    process::RunOptions o;
    o.argv = {t->python, "-I", "-c",
              "import torch, triton; assert torch.cuda.is_available(); print(triton.__version__)"};
    o.deadline = absl::Seconds(120);
    absl::StatusOr<process::RunResult> run = process::Run(o);
    if (!run.ok() || !run->ok()) {
      t->why_not = absl::StrCat(t->python, " does not import torch and triton with a GPU: ",
                                run.ok() ? run->output : std::string(run.status().message()));
      t->python.clear();
    }
    return t;
  }();
  return *found;
}

#define PTXB_REQUIRE_TRITON()                                                 \
  do {                                                                        \
    PTXB_REQUIRE_GPU();                                                       \
    if (FindTritonPython().python.empty()) {                                  \
      GTEST_SKIP() << "no Python with Triton: " << FindTritonPython().why_not; \
    }                                                                         \
  } while (0)

class TritonEvalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PTXB_REQUIRE_TRITON();
    // The bundled definitions, and an FP8 one for the fallback suite.
    workloads::DatasetOptions options;
    options.datasets = {DataDir() + "/worker/testdata/triton/fp8_dataset"};
    auto registry = workloads::DefinitionRegistry::Load(options);
    ASSERT_TRUE(registry.ok()) << registry.status();
    definitions_ = *std::move(registry);
    CompilerOptions c;
    c.abi_include_dir = DataDir() + "/worker/kernel_abi";
    compiler_ = std::make_unique<Compiler>(c);
    auto inventory = gpu::DiscoverGpus();
    ASSERT_TRUE(inventory.ok() && !inventory->gpus.empty());
    gpu_ = inventory->gpus[0];
    ASSERT_FALSE(FindRunner().empty()) << "ptxbench-runner not found next to the test";
  }

  v1::EvalResult Eval(const std::string& definition, const std::string& workload,
                      const std::string& source, int timed_calls = 50) {
    GpuEvalOptions o;
    o.runner_path = FindRunner();
    o.torch_python = FindTritonPython().python;
    o.triton_python = o.torch_python;
    o.deadline = absl::Minutes(6);
    o.trials = timed_calls < 50 ? 1 : 0;
    o.warmup_calls = timed_calls < 50 ? 1 : 10;
    o.timed_calls = timed_calls;
    GpuEvaluator evaluator(compiler_.get(), definitions_.get(), o, "test", "test-toolkit");
    v1::EvalRequest r;
    r.set_definition(definition);
    r.set_language("triton");
    r.set_kernel_source(source);
    r.set_kernel_sha256(Sha256Hex(source));
    r.set_mode(v1::FULL);
    r.add_workload_uuids(workload);
    bool suspect = false;
    v1::EvalResult result = evaluator.Evaluate(r, gpu_, &suspect);
    std::cout << definition << ": " << v1::EvalStatus_Name(result.status()) << " "
              << result.error() << " wall " << result.wall_time_ms() << " ms\n";
    for (const v1::WorkloadTrace& t : result.traces()) {
      std::cout << "[triton] " << definition << " " << t.workload_uuid() << " "
                << v1::EvalStatus_Name(t.status()) << " " << t.latency_ms() << " ms vs "
                << t.reference() << " " << t.reference_latency_ms() << " ms\n";
      for (const std::string& e : t.errors()) std::cout << "  error: " << e << "\n";
      std::cout << t.log();
    }
    if (result.status() == v1::COMPILE_ERROR) std::cout << result.compile_log();
    return result;
  }

  static std::string Kernel(const std::string& name) {
    return ReadFile(DataDir() + "/worker/testdata/triton/" + name).value_or("");
  }

  std::unique_ptr<workloads::DefinitionRegistry> definitions_;
  std::unique_ptr<Compiler> compiler_;
  gpu::GpuInfo gpu_;
};

struct TritonCase {
  const char* name;
  const char* definition;
  const char* kernel;    // under worker/testdata/triton
  const char* workload;  // the smallest workload
  int timed_calls;
};

class TritonPerDefinitionTest : public TritonEvalTest,
                                public ::testing::WithParamInterface<TritonCase> {};

TEST_P(TritonPerDefinitionTest, ATritonKernelPassesAndIsTimed) {
  const TritonCase& c = GetParam();
  const std::string source = Kernel(c.kernel);
  ASSERT_FALSE(source.empty()) << c.kernel;
  v1::EvalResult r = Eval(c.definition, c.workload, source, c.timed_calls);
  ASSERT_EQ(r.status(), v1::PASSED) << r.error();
  ASSERT_EQ(r.traces_size(), 1);
  EXPECT_GT(r.traces(0).latency_ms(), 0);
  EXPECT_GT(r.traces(0).speedup(), 0);
  EXPECT_THAT(r.traces(0).log(), HasSubstr("Triton JIT: "));
  // What ran: the JIT's own kernels (and torch's fills, if any), nothing else.
  const v1::KernelCensus& census = r.traces(0).census();
  EXPECT_EQ(census.calls_seen(), census.calls_timed());
  EXPECT_TRUE(census.gap().empty()) << census.gap();
  ASSERT_GT(census.kernels_size(), 0);
  EXPECT_EQ(census.kernels(0).origin(), v1::SUBMISSION) << census.ShortDebugString();
}

INSTANTIATE_TEST_SUITE_P(
    Bundled, TritonPerDefinitionTest,
    ::testing::Values(
        TritonCase{"gemm_m70", "gemm_n7168_k5120", "gemm.py", kGemmM70, 50},
        // 0.2 ms and more: where its figure is compared with triton.testing.do_bench's
        // (scripts/device/triton_check.py).
        TritonCase{"gemm_m8192", "gemm_n7168_k5120", "gemm.py",
                   "242ddd1a-ee21-5a9c-b2f7-9867cc517890", 20},
        TritonCase{"mha_with_lse_d128", "mha_with_lse_d128", "mha_with_lse_d128.py",
                   "b1925b19-c151-5d55-be56-d03303b7ae2c", 10},
        TritonCase{"mha_with_lse_d128_causal", "mha_with_lse_d128_causal",
                   "mha_with_lse_d128_causal.py", "36ff68ec-a941-50dc-a29a-a477f26831de", 10},
        TritonCase{"mha_bwd_d128", "mha_bwd_d128", "mha_bwd_d128.py",
                   "a7c1f029-8449-5918-86d6-c4aa45421654", 10},
        TritonCase{"mha_bwd_d128_causal", "mha_bwd_d128_causal", "mha_bwd_d128_causal.py",
                   "e87fcc6a-48cc-54eb-9c79-43e6d9d5be96", 10}),
    [](const ::testing::TestParamInfo<TritonCase>& info) { return std::string(info.param.name); });

// The adversarial submissions (worker/testdata/triton/adversarial/README.md):
// compute from libraries is LIBRARY_FALLBACK naming what ran, with the
// outputs right; an honest kernel with a torch.empty scratch is not.
struct FallbackCase {
  const char* name;
  const char* definition;
  const char* kernel;  // under worker/testdata/triton/adversarial
  const char* workload;
  v1::EvalStatus expected;
};

class TritonFallbackTest : public TritonEvalTest,
                           public ::testing::WithParamInterface<FallbackCase> {};

TEST_P(TritonFallbackTest, WhatRanDecides) {
  const FallbackCase& c = GetParam();
  const std::string source = Kernel(std::string("adversarial/") + c.kernel);
  ASSERT_FALSE(source.empty()) << c.kernel;
  v1::EvalResult r = Eval(c.definition, c.workload, source, 10);
  ASSERT_EQ(r.traces_size(), 1);
  const v1::WorkloadTrace& t = r.traces(0);
  std::cout << "[census] " << c.name << ": " << t.census().ShortDebugString() << "\n";
  ASSERT_EQ(t.status(), c.expected) << r.error();
  if (c.expected == v1::LIBRARY_FALLBACK) {
    EXPECT_TRUE(t.census().outputs_correct());
    EXPECT_EQ(t.speedup(), 0);
    ASSERT_GT(t.errors_size(), 0);
    EXPECT_THAT(t.errors(0), HasSubstr("library compute"));
    bool library = false;
    for (const v1::LaunchedKernel& k : t.census().kernels()) library |= k.origin() == v1::LIBRARY;
    EXPECT_TRUE(library) << t.census().ShortDebugString();
  }
}

constexpr char kMhaSmallest[] = "b1925b19-c151-5d55-be56-d03303b7ae2c";

INSTANTIATE_TEST_SUITE_P(
    Adversarial, TritonFallbackTest,
    ::testing::Values(
        FallbackCase{"torch_matmul", "gemm_n7168_k5120", "torch_matmul.py", kGemmM70,
                     v1::LIBRARY_FALLBACK},
        FallbackCase{"defined_not_launched", "gemm_n7168_k5120", "defined_not_launched.py",
                     kGemmM70, v1::LIBRARY_FALLBACK},
        FallbackCase{"sdpa", "mha_with_lse_d128", "sdpa.py", kMhaSmallest, v1::LIBRARY_FALLBACK},
        FallbackCase{"compiled_reference", "mha_with_lse_d128", "compiled_reference.py",
                     kMhaSmallest, v1::LIBRARY_FALLBACK},
        FallbackCase{"fp8_bf16_cast", "gemm_fp8_n4096_k4096", "fp8_bf16_cast.py", "fp8-gemm-m256",
                     v1::LIBRARY_FALLBACK},
        FallbackCase{"scratch_empty", "gemm_n7168_k5120", "scratch_empty.py", kGemmM70,
                     v1::PASSED}),
    [](const ::testing::TestParamInfo<FallbackCase>& info) { return std::string(info.param.name); });

// A run() that silences the tracer before it calls cuBLAS: the GPU time
// the census did not see is the finding.
TEST_F(TritonEvalTest, ASilencedCensusIsAFallback) {
  const std::string source = Kernel("adversarial/torch_matmul.py") +
                             "\n\nimport ctypes as _c\n"
                             // By its name: the copy the tracer opened, whichever it was.
                             "_cupti = _c.CDLL('libcupti.so.13')\n"
                             "_ptxb_run = run\n\n"
                             "def run(*args):\n"
                             "    for kind in (1, 2, 3, 10):\n"
                             "        _cupti.cuptiActivityDisable(kind)\n"
                             "    return _ptxb_run(*args)\n";
  v1::EvalResult r = Eval("gemm_n7168_k5120", kGemmM70, source, 10);
  ASSERT_EQ(r.traces_size(), 1);
  std::cout << "[census] silenced: " << r.traces(0).census().ShortDebugString() << "\n";
  EXPECT_EQ(r.traces(0).status(), v1::LIBRARY_FALLBACK);
}

// Autotuning happens in the JIT host; the timing host's first call (a
// checked one, never timed) retunes in its own process.
TEST_F(TritonEvalTest, AnAutotunedKernelPasses) {
  v1::EvalResult r = Eval("gemm_n7168_k5120", kGemmM70, Kernel("gemm_autotune.py"));
  ASSERT_EQ(r.status(), v1::PASSED) << r.error();
}

// A first call per process that takes 2 s (as a cold JIT does) is in no
// figure: the kernel reads as fast as itself without it.
TEST_F(TritonEvalTest, ASlowFirstCallIsNotInTheFigure) {
  const std::string warm = Kernel("gemm.py");
  ASSERT_FALSE(warm.empty());
  const std::string slow =
      warm + "\n\nimport time as _ptxb_time\n_ptxb_run = run\n_ptxb_first = [True]\n\n"
             "def run(*args):\n"
             "    if _ptxb_first[0]:\n"
             "        _ptxb_first[0] = False\n"
             "        _ptxb_time.sleep(2.0)\n"
             "    return _ptxb_run(*args)\n";
  v1::EvalResult a = Eval("gemm_n7168_k5120", kGemmM70, warm);
  v1::EvalResult b = Eval("gemm_n7168_k5120", kGemmM70, slow);
  ASSERT_EQ(a.status(), v1::PASSED);
  ASSERT_EQ(b.status(), v1::PASSED);
  const double ratio = b.traces(0).latency_ms() / a.traces(0).latency_ms();
  std::cout << "[triton] slow first call: " << b.traces(0).latency_ms() << " ms against "
            << a.traces(0).latency_ms() << " ms warm, ratio " << ratio << ", walls "
            << b.wall_time_ms() << " / " << a.wall_time_ms() << " ms\n";
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.1);
  // The sleeps happened (once in each host), outside the figure.
  EXPECT_GT(b.wall_time_ms(), a.wall_time_ms() + 3000);
}

TEST_F(TritonEvalTest, AKernelTritonCannotCompileIsACompileError) {
  const std::string source = absl::StrReplaceAll(
      Kernel("gemm.py"), {{"tl.dot(", "tl.dot(tl.no_such_function(), "}});
  v1::EvalResult r = Eval("gemm_n7168_k5120", kGemmM70, source);
  EXPECT_EQ(r.status(), v1::COMPILE_ERROR);
  ASSERT_EQ(r.traces_size(), 1);
  ASSERT_GT(r.traces(0).errors_size(), 0);
  EXPECT_THAT(r.traces(0).errors(0), HasSubstr("Triton could not compile"));
  EXPECT_THAT(r.traces(0).errors(0), HasSubstr("during Triton's JIT"));
}

TEST_F(TritonEvalTest, ARunThatRaisesIsARuntimeErrorNamingItsLine) {
  const std::string source =
      Kernel("gemm.py") + "\n\ndef run(*args):\n    raise ValueError('no luck')\n";
  v1::EvalResult r = Eval("gemm_n7168_k5120", kGemmM70, source);
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  ASSERT_EQ(r.traces_size(), 1);
  ASSERT_GT(r.traces(0).errors_size(), 0);
  EXPECT_THAT(r.traces(0).errors(0), HasSubstr("ValueError: no luck (kernel.py line"));
}

TEST_F(TritonEvalTest, ARunThatReturnsItsOutputsIsToldToWriteThem) {
  const std::string source =
      Kernel("gemm.py") + "\n\ndef run(A, B):\n    return A @ B.t()\n";
  v1::EvalResult r = Eval("gemm_n7168_k5120", kGemmM70, source);
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  ASSERT_EQ(r.traces_size(), 1);
  ASSERT_GT(r.traces(0).errors_size(), 0);
  EXPECT_THAT(r.traces(0).errors(0), HasSubstr("it seems to return its outputs"));
}

}  // namespace
}  // namespace ptxbench::worker
