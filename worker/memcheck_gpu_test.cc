// GPU tests of the memcheck gate (docs/MEASUREMENT.md, "The memcheck gate"):
// the worker's GpuEvaluator builds each test kernel (worker/testdata/gemm)
// (or a variant made of correct.cu) and evaluates it on GPU 0 with EvalRequest.memcheck, compute-sanitizer
// running in the candidate's sandbox. Each test skips, saying why, where
// there is no GPU or no compute-sanitizer ($PTXB_COMPUTE_SANITIZER, else
// the toolkit's). One binary:
//   build/worker/memcheck_gpu_test --gtest_filter='MemcheckGpuTest.*'

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "testing/require_gpu.h"
#include "worker/gpu_eval.h"
#include "worker/profile/sanitizer_install.h"
#include "workloads/registry.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kGemmM70[] = "729b8d2e-8307-57e0-b6f5-d50957348534";

class MemcheckGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PTXB_REQUIRE_GPU();
    const char* configured = std::getenv("PTXB_COMPUTE_SANITIZER");
    absl::StatusOr<SanitizerInstall> found =
        FindSanitizer(configured != nullptr ? configured : "/usr/local/cuda/bin/compute-sanitizer");
    if (!found.ok()) GTEST_SKIP() << "no compute-sanitizer: " << found.status().message();
    sanitizer_ = *found;
    auto registry = workloads::DefinitionRegistry::Load({});
    ASSERT_TRUE(registry.ok()) << registry.status();
    definitions_ = *std::move(registry);
    CompilerOptions c;
    c.abi_include_dir = DataDir() + "/worker/kernel_abi";
    c.cache_dir = (std::filesystem::temp_directory_path() / "ptxb_memcheck_gpu_test_cache").string();
    compiler_ = std::make_unique<Compiler>(c);
    auto inventory = gpu::DiscoverGpus();
    ASSERT_TRUE(inventory.ok() && !inventory->gpus.empty());
    gpu_ = inventory->gpus[0];
    ASSERT_FALSE(FindRunner().empty()) << "ptxbench-runner not found next to the test";
  }

  static std::string Source(const std::string& kernel_file) {
    return ReadFile(DataDir() + "/worker/testdata/gemm/" + kernel_file).value_or("");
  }

  // The simple correct GEMM that also writes four zeros past the end of its
  // output: inside the allocation's padding, which is zero anyway, so the
  // checks pass it; only memcheck sees the write.
  static std::string WritesPastTheEnd() {
    std::string source = Source("correct.cu");
    const size_t marker = source.find("// PTXB_TEST_SPOIL");
    if (marker == std::string::npos) return "";
    source.replace(marker, std::string("// PTXB_TEST_SPOIL").size(),
                   "ptxb_past_end<<<1, 4, 0, stream>>>((__nv_bfloat16*)C.data, C.numel());");
    source.insert(source.find("PTXB_EXPORT"),
                  "__global__ void ptxb_past_end(__nv_bfloat16* p, long long n) {\n"
                  "  p[n + threadIdx.x] = __float2bfloat16(0.f);  // past the end\n}\n\n");
    return source;
  }

  v1::EvalResult Eval(const std::string& name, const std::string& source, bool memcheck) {
    GpuEvalOptions o;
    o.runner_path = FindRunner();
    o.UseSanitizer(sanitizer_);
    GpuEvaluator evaluator(compiler_.get(), definitions_.get(), o, "test", "test-toolkit");
    v1::EvalRequest r;
    r.set_definition("gemm_n7168_k5120");
    r.set_language("cuda");
    r.set_kernel_source(source);
    r.set_kernel_sha256(Sha256Hex(r.kernel_source()));
    r.set_mode(v1::FULL);
    r.add_workload_uuids(kGemmM70);
    r.set_memcheck(memcheck);
    bool suspect = false;
    v1::EvalResult result = evaluator.Evaluate(r, gpu_, &suspect);
    std::cout << name << (memcheck ? " (memcheck)" : "") << ": "
              << v1::EvalStatus_Name(result.status()) << " " << result.error() << "\n"
              << "  gate: " << v1::EvalStatus_Name(result.memcheck().status()) << " "
              << result.memcheck().wall_time_ms() << " ms, debug "
              << result.memcheck().debug_wall_time_ms() << " ms\n";
    for (const v1::WorkloadTrace& t : result.traces()) {
      std::cout << "  " << v1::EvalStatus_Name(t.status()) << " latency " << t.latency_ms() << " ms\n";
      for (const std::string& e : t.errors()) std::cout << "    error: " << e << "\n";
      std::cout << "  log:\n" << t.log() << "\n";
    }
    return result;
  }

  SanitizerInstall sanitizer_;
  std::unique_ptr<workloads::DefinitionRegistry> definitions_;
  std::unique_ptr<Compiler> compiler_;
  gpu::GpuInfo gpu_;
};

// The acceptance case: a write past the output's end that the checks cannot
// see (it lands in the allocation's zero padding, as a zero) is the gate's
// RUNTIME_ERROR, untimed, with the sanitizer's report and the source line.
TEST_F(MemcheckGpuTest, AWritePastTheEndThatPassesTheChecksFailsTheGate) {
  const std::string source = WritesPastTheEnd();
  ASSERT_FALSE(source.empty()) << "correct.cu lacks its spoil marker";
  const v1::EvalResult unchecked = Eval("past the end", source, /*memcheck=*/false);
  ASSERT_EQ(unchecked.status(), v1::PASSED) << "the checks saw the write: this test proves nothing";
  const v1::EvalResult r = Eval("past the end", source, /*memcheck=*/true);
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_EQ(r.memcheck().status(), v1::RUNTIME_ERROR);
  EXPECT_GE(r.memcheck().errors(), 1);
  EXPECT_THAT(r.memcheck().report(), HasSubstr("Invalid __global__ write"));
  ASSERT_EQ(r.traces_size(), 1);
  EXPECT_EQ(r.traces(0).latency_ms(), 0) << "timed after the gate failed";
  EXPECT_THAT(r.traces(0).log(), HasSubstr("Invalid __global__ write"));
  EXPECT_THAT(r.traces(0).log(), HasSubstr("past the end"));  // the source line, from the debug run
  EXPECT_THAT(r.traces(0).log(), Not(HasSubstr("Host Frame")));
}

// A clean kernel's evaluation is the same with the gate, but for the gate's
// own time (reported apart) and its line in the log.
TEST_F(MemcheckGpuTest, ACleanKernelIsUnchangedButForTheGatesTime) {
  const v1::EvalResult plain = Eval("correct.cu", Source("correct.cu"), /*memcheck=*/false);
  const v1::EvalResult gated = Eval("correct.cu", Source("correct.cu"), /*memcheck=*/true);
  ASSERT_EQ(plain.status(), v1::PASSED);
  EXPECT_EQ(gated.status(), v1::PASSED);
  EXPECT_FALSE(plain.has_memcheck());
  EXPECT_EQ(gated.memcheck().status(), v1::PASSED);
  EXPECT_EQ(gated.memcheck().errors(), 0);
  EXPECT_GT(gated.memcheck().wall_time_ms(), 0);
  ASSERT_EQ(gated.traces_size(), 1);
  EXPECT_THAT(gated.traces(0).log(), ::testing::StartsWith("memcheck gate: clean on workload "));
  EXPECT_GT(gated.traces(0).speedup(), 0);
  // The same kernel on the same GPU: within noise of the plain run.
  EXPECT_NEAR(gated.traces(0).latency_ms(), plain.traces(0).latency_ms(),
              0.2 * plain.traces(0).latency_ms());
}

// A wild pointer: memcheck reports it, the gate stops the turn.
TEST_F(MemcheckGpuTest, AnIllegalAddressIsTheGatesRuntimeError) {
  const v1::EvalResult r =
      Eval("illegal_address.cu", Source("illegal_address.cu"), /*memcheck=*/true);
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_EQ(r.memcheck().status(), v1::RUNTIME_ERROR);
  ASSERT_EQ(r.traces_size(), 1);
  EXPECT_THAT(r.traces(0).log(), HasSubstr("========= "));
}

}  // namespace
}  // namespace ptxbench::worker
