#include "worker/compile_only.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_replace.h"

#include "common/data_dir.h"
#include "gtest/gtest.h"
#include "worker/worker_metrics.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;

// A correct-looking GEMM for gemm_n7168_k5120 in the kernel ABI (it is never
// run here: compile-only).
constexpr char kGemm[] = R"(#include "ptxbench/kernel_abi.h"
#include <cuda_bf16.h>
__global__ void gemm(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                     int64_t m, int64_t n, int64_t k) {
  int64_t row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.f;
  for (int64_t i = 0; i < k; ++i) acc += __bfloat162float(a[row * k + i]) * __bfloat162float(b[col * k + i]);
  c[row * n + col] = __float2bfloat16(acc);
}
PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  int64_t m = A.sizes[0], k = A.sizes[1], n = B.sizes[0];
  dim3 block(16, 16), grid((n + 15) / 16, (m + 15) / 16);
  gemm<<<grid, block, 0, stream>>>(static_cast<const __nv_bfloat16*>(A.data),
      static_cast<const __nv_bfloat16*>(B.data), static_cast<__nv_bfloat16*>(C.data), m, n, k);
}
)";

class CompileOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(CompilerOptions().nvcc)) {
      GTEST_SKIP() << "nvcc not found at " << CompilerOptions().nvcc
                   << ": compile-only evaluation cannot be tested here";
    }
    auto defs = workloads::DefinitionRegistry::Load({});
    ASSERT_TRUE(defs.ok()) << defs.status();
    definitions_ = *std::move(defs);
    CompilerOptions options;
    options.abi_include_dir = DataDir() + "/worker/kernel_abi";
    options.cache_dir = ::testing::TempDir() + "/ptxb_compile_only_" + std::to_string(getpid());
    compiler_ = std::make_unique<Compiler>(options);
  }

  v1::Task Task(const std::string& source, v1::EvalMode mode) {
    v1::Task task;
    task.set_kind(v1::EVAL);
    v1::EvalRequest* e = task.mutable_eval();
    e->set_definition("gemm_n7168_k5120");
    e->set_language("cuda");
    e->set_kernel_source(source);
    e->set_mode(mode);
    return task;
  }

  std::string Version() {
    absl::StatusOr<std::string> v = Compiler::ToolkitVersion(CompilerOptions().nvcc);
    return v.ok() ? *v : "";
  }

  std::unique_ptr<workloads::DefinitionRegistry> definitions_;
  std::unique_ptr<Compiler> compiler_;
  WorkerMetrics metrics_{{}, {}};
};

TEST_F(CompileOnlyTest, BuildsAndReportsResourcesButNeverPasses) {
  CompileOnlyHandler handler(compiler_.get(), definitions_.get(), &metrics_, "wk-test",
                             Version());
  std::atomic<bool> cancelled{false};
  v1::CompleteRequest done = handler.Run(Task(kGemm, v1::COMPILE_ONLY), cancelled);
  ASSERT_TRUE(done.has_eval()) << done.DebugString();
  const v1::EvalResult& r = done.eval();
  EXPECT_EQ(r.status(), v1::COMPILED) << r.compile_log();
  EXPECT_FALSE(r.all_passed());
  EXPECT_EQ(r.traces_size(), 0) << "nothing was run";
  ASSERT_GE(r.resources_size(), 1);
  EXPECT_GT(r.resources(0).registers(), 0);
  EXPECT_FALSE(r.ptx().sha256().empty());
  EXPECT_NE(r.toolkit_version().find("13.0"), std::string::npos) << r.toolkit_version();
  // The result says which definition it was judged against.
  EXPECT_EQ(r.dataset(), "bundled");
  EXPECT_EQ(r.definition_version().size(), 64u);
  // Built for the experiment's first architecture: Hopper when none is named.
  EXPECT_EQ(r.compile_target(), "sm_90a");
  EXPECT_EQ(r.ptx().virtual_arch(), "sm_90a");
  EXPECT_NE(metrics_.Prometheus().find("ptxbench_worker_compile_seconds_count 1\n"),
            std::string::npos);
}

TEST_F(CompileOnlyTest, BrokenKernelIsCompileErrorAndFullModeIsRefused) {
  CompileOnlyHandler handler(compiler_.get(), definitions_.get(), &metrics_, "wk-test",
                             Version());
  std::atomic<bool> cancelled{false};
  v1::CompleteRequest broken =
      handler.Run(Task("PTXB_EXPORT void run( {", v1::COMPILE_ONLY), cancelled);
  ASSERT_TRUE(broken.has_eval());
  EXPECT_EQ(broken.eval().status(), v1::COMPILE_ERROR);
  EXPECT_FALSE(broken.eval().compile_log().empty());

  v1::CompleteRequest full = handler.Run(Task(kGemm, v1::FULL), cancelled);
  ASSERT_TRUE(full.has_failure());
  EXPECT_EQ(full.failure().failure_class(), v1::INFRA);

  v1::EvalRequest unknown = Task(kGemm, v1::COMPILE_ONLY).eval();
  unknown.set_definition("no_such_definition");
  v1::EvalResult r = EvaluateCompileOnly(*compiler_, *definitions_, unknown, "wk-test", Version());
  EXPECT_EQ(r.status(), v1::INFRA_ERROR);
  EXPECT_NE(r.error().find("no_such_definition"), std::string::npos);
}

TEST_F(CompileOnlyTest, RawPtxNeedsALaunchSpecThatWorksAtEveryWorkload) {
  std::ifstream in(DataDir() + "/worker/testdata/gemm/correct.ptx");
  std::stringstream text;
  text << in.rdbuf();
  const std::string with_spec = text.str();
  ASSERT_NE(with_spec.find("// ptxbench-launch: "), std::string::npos);
  v1::EvalRequest request = Task(with_spec, v1::COMPILE_ONLY).eval();
  request.set_language("ptx");
  v1::EvalResult ok = EvaluateCompileOnly(*compiler_, *definitions_, request, "wk", Version());
  EXPECT_EQ(ok.status(), v1::COMPILED) << ok.compile_log();
  ASSERT_EQ(ok.resources_size(), 1);
  EXPECT_EQ(ok.resources(0).kernel_name(), "gemm_ptx");

  // Without the spec line, and with one naming another entry: the model is told.
  request.set_kernel_source(with_spec.substr(0, with_spec.find("// ptxbench-launch: ")));
  v1::EvalResult none = EvaluateCompileOnly(*compiler_, *definitions_, request, "wk", Version());
  EXPECT_EQ(none.status(), v1::COMPILE_ERROR);
  EXPECT_NE(none.compile_log().find("no launch spec"), std::string::npos) << none.compile_log();
  request.set_kernel_source(absl::StrReplaceAll(with_spec, {{"\"entry\": \"gemm_ptx\"", "\"entry\": \"gemm\""}}));
  v1::EvalResult wrong = EvaluateCompileOnly(*compiler_, *definitions_, request, "wk", Version());
  EXPECT_EQ(wrong.status(), v1::COMPILE_ERROR);
  EXPECT_NE(wrong.compile_log().find("no .entry \"gemm\""), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::worker
