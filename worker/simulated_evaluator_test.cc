#include "worker/simulated_evaluator.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

// Suite names start with "simulated_" so that `ctest -R simulated` selects them.
namespace ptxbench::worker {
namespace {

using ::google::protobuf::util::MessageDifferencer;

v1::EvalRequest Request(int variant, std::vector<std::string> uuids = {"wa", "wb", "wc"}) {
  v1::EvalRequest r;
  r.set_definition("gemm_test");
  r.set_language("cuda");
  r.set_kernel_source(absl::StrCat("__global__ void my_kernel_", variant,
                                   "(float* y) { y[0] = ", variant, "; }\n"));
  r.set_kernel_sha256(Sha256Hex(r.kernel_source()));
  for (const auto& u : uuids) r.add_workload_uuids(u);
  r.set_mode(v1::FULL);
  return r;
}

SimulatedEvaluator Evaluator(uint64_t seed = 7) {
  return SimulatedEvaluator({.seed = seed, .worker_id = "w-test", .gpu_model = "Simulated H200"});
}

TEST(simulated_evaluator, SameInputsGiveTheSameResult) {
  for (int v = 0; v < 20; ++v) {
    v1::EvalResult a = Evaluator().Evaluate(Request(v));
    v1::EvalResult b = Evaluator().Evaluate(Request(v));
    EXPECT_TRUE(MessageDifferencer::Equals(a, b)) << "variant " << v;
  }
}

TEST(simulated_evaluator, SeedChangesTheOutcome) {
  int differing = 0;
  for (int v = 0; v < 20; ++v) {
    differing += !MessageDifferencer::Equals(Evaluator(1).Evaluate(Request(v)),
                                             Evaluator(2).Evaluate(Request(v)));
  }
  EXPECT_GE(differing, 15);
}

TEST(simulated_evaluator, OutcomeMixIsRoughlyAsDocumented) {
  std::map<v1::EvalStatus, int> counts;
  const int n = 2000;
  for (int v = 0; v < n; ++v) counts[Evaluator().Evaluate(Request(v)).status()]++;
  EXPECT_EQ(counts.size(), 3u);
  EXPECT_NEAR(counts[v1::COMPILE_ERROR] / double{n}, 0.15, 0.03);
  EXPECT_NEAR(counts[v1::INCORRECT_NUMERICAL] / double{n}, 0.20, 0.03);
  EXPECT_NEAR(counts[v1::PASSED] / double{n}, 0.65, 0.03);
}

TEST(simulated_evaluator, ResultsAreLabelledAndConsistent) {
  int seen_passed = 0, seen_incorrect = 0, seen_compile_error = 0;
  for (int v = 0; v < 200; ++v) {
    v1::EvalResult r = Evaluator().Evaluate(Request(v));
    EXPECT_TRUE(r.simulated());
    EXPECT_EQ(r.worker_id(), "w-test");
    EXPECT_EQ(r.gpu_model(), "Simulated H200");
    switch (r.status()) {
      case v1::COMPILE_ERROR:
        ++seen_compile_error;
        EXPECT_TRUE(r.traces().empty());
        EXPECT_NE(r.compile_log().find("error:"), std::string::npos);
        EXPECT_FALSE(r.all_passed());
        EXPECT_EQ(r.min_speedup(), 0);
        break;
      case v1::PASSED: {
        ++seen_passed;
        ASSERT_EQ(r.traces_size(), 3);
        EXPECT_TRUE(r.all_passed());
        double min = 100;
        for (const auto& t : r.traces()) {
          EXPECT_EQ(t.status(), v1::PASSED);
          EXPECT_GE(t.speedup(), 0.3);
          EXPECT_LT(t.speedup(), 2.0);
          EXPECT_NEAR(t.reference_latency_ms() / t.latency_ms(), t.speedup(), 1e-9);
          min = std::min(min, t.speedup());
        }
        EXPECT_EQ(r.min_speedup(), min);
        EXPECT_EQ(r.traces(0).workload_uuid(), "wa");
        EXPECT_EQ(r.traces(2).workload_uuid(), "wc");
        ASSERT_EQ(r.resources_size(), 1);
        EXPECT_EQ(r.resources(0).kernel_name(), absl::StrCat("my_kernel_", v));
        EXPECT_EQ(r.ptx().virtual_arch(), "sm_90a");
        EXPECT_EQ(r.ptx().sha256().size(), 64u);
        break;
      }
      case v1::INCORRECT_NUMERICAL: {
        ++seen_incorrect;
        EXPECT_FALSE(r.all_passed());
        EXPECT_EQ(r.min_speedup(), 0);  // as the real worker: no speedup unless all passed
        int bad = 0;
        for (const auto& t : r.traces()) {
          if (t.status() == v1::PASSED) continue;
          ++bad;
          EXPECT_EQ(t.status(), v1::INCORRECT_NUMERICAL);
          EXPECT_GT(t.max_abs_error(), 0.01);
          EXPECT_FALSE(t.errors().empty());
        }
        EXPECT_EQ(bad, 1);
        break;
      }
      default:
        ADD_FAILURE() << "unexpected status " << v1::EvalStatus_Name(r.status());
    }
  }
  EXPECT_GT(seen_passed, 0);
  EXPECT_GT(seen_incorrect, 0);
  EXPECT_GT(seen_compile_error, 0);
}

TEST(simulated_evaluator, EmptyWorkloadListUsesSyntheticNames) {
  for (int v = 0; v < 50; ++v) {
    v1::EvalResult r = Evaluator().Evaluate(Request(v, {}));
    if (r.status() == v1::COMPILE_ERROR) continue;
    ASSERT_EQ(r.traces_size(), 3);
    EXPECT_EQ(r.traces(0).workload_uuid(), "w0");
    EXPECT_EQ(r.traces(1).workload_uuid(), "w1");
    EXPECT_EQ(r.traces(2).workload_uuid(), "w2");
    return;
  }
  FAIL() << "no variant compiled";
}

TEST(simulated_evaluator, EmptyWorkloadListUsesTheDefinitionsWorkloads) {
  auto registry = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(registry.ok()) << registry.status();
  auto gemm = (*registry)->Find("gemm_n7168_k5120");
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  std::vector<std::string> expected;
  for (const workloads::Workload& w : (*gemm)->workloads) expected.push_back(w.uuid);
  ASSERT_FALSE(expected.empty());
  SimulatedEvaluator evaluator({.seed = 7, .worker_id = "w-test", .definitions = registry->get()});
  for (int v = 0; v < 20; ++v) {
    v1::EvalRequest request = Request(v, {});
    request.set_definition("gemm_n7168_k5120");
    v1::EvalResult r = evaluator.Evaluate(request);
    if (r.status() == v1::COMPILE_ERROR) continue;
    std::vector<std::string> uuids;
    for (const v1::WorkloadTrace& t : r.traces()) uuids.push_back(t.workload_uuid());
    EXPECT_EQ(uuids, expected);
    // A definition the registry does not know: the synthetic names.
    EXPECT_EQ(evaluator.Evaluate(Request(v, {})).traces(0).workload_uuid(), "w0");
    return;
  }
  FAIL() << "no variant compiled";
}

TEST(simulated_evaluator, TheMemcheckGateIsSimulatedCleanWhenAskedFor) {
  auto registry = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(registry.ok()) << registry.status();
  SimulatedEvaluator evaluator({.seed = 7, .worker_id = "w-test", .definitions = registry->get()});
  v1::EvalResult r;
  for (int v = 0; v < 20 && r.traces_size() == 0; ++v) {
    v1::EvalRequest request = Request(v, {});
    EXPECT_FALSE(evaluator.Evaluate(request).has_memcheck());  // not asked for
    request.set_memcheck(true);
    r = evaluator.Evaluate(request);
  }
  ASSERT_GT(r.traces_size(), 0);
  EXPECT_EQ(r.memcheck().status(), v1::PASSED);
  EXPECT_EQ(r.memcheck().tool(), "simulated sanitizer");
  EXPECT_EQ(r.memcheck().workload_uuid(), r.traces(0).workload_uuid());
}

// Held-out workloads (worker/held_out.h): run after the shown ones, and
// never the profile's or the memcheck gate's, as the GPU worker does.
TEST(simulated_evaluator, HeldOutWorkloadsRunLastAndAreNeverProfiledOrGated) {
  auto registry = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(registry.ok()) << registry.status();
  SimulatedEvaluator evaluator({.seed = 7, .worker_id = "w-test", .definitions = registry->get()});
  const std::string largest = "242ddd1a-ee21-5a9c-b2f7-9867cc517890";  // M=8192
  const std::string m70 = "729b8d2e-8307-57e0-b6f5-d50957348534";
  for (int v = 0; v < 20; ++v) {
    v1::EvalRequest request = Request(v, {largest, m70});
    request.set_definition("gemm_n7168_k5120");
    request.add_held_out_workload_uuids(largest);
    request.set_profile(true);
    request.set_memcheck(true);
    v1::EvalResult r = evaluator.Evaluate(request);
    if (r.status() == v1::COMPILE_ERROR) continue;
    ASSERT_EQ(r.traces_size(), 2);
    EXPECT_EQ(r.traces(0).workload_uuid(), m70);
    EXPECT_EQ(r.traces(1).workload_uuid(), largest);
    EXPECT_EQ(r.profile().workload_uuid(), m70);  // not the largest: held out
    EXPECT_EQ(r.memcheck().workload_uuid(), m70);
    return;
  }
  FAIL() << "every variant failed to compile";
}

TEST(simulated_evaluator, AProfileIsSimulatedOnTheLargestWorkloadWhenAskedFor) {
  auto registry = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(registry.ok()) << registry.status();
  SimulatedEvaluator evaluator({.seed = 7, .worker_id = "w-test", .definitions = registry->get()});
  for (int v = 0; v < 20; ++v) {
    v1::EvalRequest request = Request(v, {});
    request.set_definition("gemm_n7168_k5120");
    EXPECT_FALSE(evaluator.Evaluate(request).has_profile());  // not asked for
    request.set_profile(true);
    v1::EvalResult r = evaluator.Evaluate(request);
    if (r.status() == v1::COMPILE_ERROR) continue;
    ASSERT_TRUE(r.has_profile());
    const v1::KernelProfileRun& p = r.profile();
    EXPECT_TRUE(p.simulated());
    EXPECT_EQ(p.status(), v1::PASSED);
    EXPECT_EQ(p.axes().at("M"), 8192);  // the largest of the bundled GEMM's workloads
    ASSERT_EQ(p.kernels_size(), 1);
    EXPECT_EQ(p.kernels(0).name(), absl::StrCat("my_kernel_", v));
    EXPECT_GT(p.kernels(0).duration_us(), 0);
    EXPECT_FALSE(p.report().empty());
    EXPECT_EQ(p.report_bytes(), static_cast<int64_t>(p.report().size()));
    // A workload the evaluation does not run cannot be profiled.
    request.set_profile_workload_uuid("no-such-workload");
    EXPECT_EQ(evaluator.Evaluate(request).profile().status(), v1::INFRA_ERROR);
    return;
  }
  FAIL() << "no variant compiled";
}

TEST(simulated_evaluator, WorkloadListIsPartOfTheKey) {
  // The same kernel on another workload set has other per-workload speedups.
  for (int v = 0; v < 50; ++v) {
    v1::EvalResult a = Evaluator().Evaluate(Request(v, {"x1"}));
    if (a.status() != v1::PASSED) continue;
    v1::EvalResult b = Evaluator().Evaluate(Request(v, {"x2"}));
    ASSERT_EQ(b.traces_size(), 1);
    EXPECT_NE(a.traces(0).speedup(), b.traces(0).speedup());
    return;
  }
  FAIL() << "no variant passed";
}

TEST(simulated_evaluator, CompileOnlyEndsCompiled) {
  int compiled = 0;
  for (int v = 0; v < 50; ++v) {
    v1::EvalRequest req = Request(v);
    req.set_mode(v1::COMPILE_ONLY);
    v1::EvalResult r = Evaluator().Evaluate(req);
    if (r.status() == v1::COMPILE_ERROR) continue;
    ++compiled;
    EXPECT_EQ(r.status(), v1::COMPILED);
    EXPECT_TRUE(r.traces().empty());
    EXPECT_FALSE(r.all_passed());
    EXPECT_EQ(r.resources_size(), 1);
    EXPECT_FALSE(r.ptx().sha256().empty());
    EXPECT_TRUE(r.simulated());
  }
  EXPECT_GT(compiled, 30);
}

TEST(simulated_evaluator, CensusCountsFamiliesInTheSource) {
  for (int v = 0; v < 50; ++v) {
    v1::EvalRequest req = Request(v);
    req.set_kernel_source(absl::StrCat(
        "__global__ void k", v, "() { asm(\"wgmma.fence.sync.aligned;\"); ",
        "asm(\"wgmma.commit_group.sync.aligned;\"); asm(\"mbarrier.init.b64 [%0], 1;\"); }"));
    req.clear_kernel_sha256();  // derived from the source then
    v1::EvalResult r = Evaluator().Evaluate(req);
    if (r.status() == v1::COMPILE_ERROR) continue;
    EXPECT_EQ(r.ptx().instruction_counts().at("wgmma."), 2);
    EXPECT_EQ(r.ptx().instruction_counts().at("mbarrier."), 1);
    EXPECT_EQ(r.ptx().architecture_counts().at("hopper"), 3);
    EXPECT_EQ(r.ptx().instruction_counts().count("mma.sync."), 0u);
    return;
  }
  FAIL() << "no variant compiled";
}

TEST(simulated_evaluator, ATimedWorkloadHasACensusOfTheSubmissionsKernel) {
  int timed = 0;
  for (int v = 0; v < 50; ++v) {
    v1::EvalResult r = Evaluator().Evaluate(Request(v));
    for (const v1::WorkloadTrace& t : r.traces()) {
      if (t.status() != v1::PASSED) {
        EXPECT_FALSE(t.has_census()) << "an untimed workload has no census";
        continue;
      }
      ++timed;
      ASSERT_TRUE(t.has_census());
      const v1::KernelCensus& c = t.census();
      ASSERT_EQ(c.kernels_size(), 1);
      EXPECT_EQ(c.kernels(0).name(), absl::StrCat("my_kernel_", v));
      EXPECT_EQ(c.kernels(0).origin(), v1::SUBMISSION);
      EXPECT_NEAR(c.kernels(0).ms_per_call(), t.latency_ms(), 1e-12);
      EXPECT_GT(c.kernels(0).launches(), 0);
      EXPECT_EQ(c.calls_seen(), c.calls_timed());
      EXPECT_TRUE(c.outputs_correct());
      EXPECT_TRUE(c.gap().empty());
    }
  }
  EXPECT_GT(timed, 30);
}

v1::EvalRequest Triton(absl::string_view run_body) {
  v1::EvalRequest r = Request(0);
  r.set_language("triton");
  r.set_kernel_source(absl::StrCat(
      "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\n"
      "def gemm_tile(a_ptr, b_ptr, c_ptr):\n    pass\n\ndef run(A, B, C):\n",
      run_body));
  r.clear_kernel_sha256();
  return r;
}

// The documented mark: a source that calls a library falls back on every
// workload, whatever its hash would have made it, correct by the checks,
// the library's kernel named.
TEST(simulated_evaluator, ALibraryCallInTheSourceIsALibraryFallbackWithTheKernelNamed) {
  const struct {
    const char* body;
    const char* kernel_part;
  } cases[] = {
      {"    C.copy_(torch.matmul(A, B.T))\n", "_cublas"},
      {"    C.copy_(F.scaled_dot_product_attention(A, B, B))\n", "flash_fwd_kernel"},
      {"    # calls cuBLAS through ctypes\n    lib.cublasGemmEx(A, B, C)\n", "_cublas"},
  };
  for (const auto& c : cases) {
    for (uint64_t seed = 0; seed < 8; ++seed) {  // no hash gives it another outcome
      v1::EvalResult r = Evaluator(seed).Evaluate(Triton(c.body));
      ASSERT_EQ(r.status(), v1::LIBRARY_FALLBACK) << c.body;
      EXPECT_TRUE(r.simulated());
      EXPECT_FALSE(r.all_passed());
      EXPECT_EQ(r.min_speedup(), 0);
      ASSERT_EQ(r.traces_size(), 3);
      for (const v1::WorkloadTrace& t : r.traces()) {
        EXPECT_EQ(t.status(), v1::LIBRARY_FALLBACK);
        EXPECT_GT(t.latency_ms(), 0);  // it was timed
        ASSERT_TRUE(t.has_census());
        EXPECT_TRUE(t.census().outputs_correct());
        ASSERT_GE(t.census().kernels_size(), 1);
        EXPECT_EQ(t.census().kernels(0).origin(), v1::LIBRARY);
        EXPECT_NE(t.census().kernels(0).name().find(c.kernel_part), std::string::npos)
            << t.census().kernels(0).name();
      }
    }
  }
}

TEST(simulated_evaluator, ATritonKernelIsNamedAfterItsJitFunctionAndAFillIsMemory) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    v1::EvalResult r = Evaluator(seed).Evaluate(
        Triton("    C.zero_()\n    gemm_tile[(1,)](A, B, C)\n"));
    if (r.status() != v1::PASSED) continue;
    const v1::KernelCensus& c = r.traces(0).census();
    ASSERT_EQ(c.kernels_size(), 2);
    EXPECT_EQ(c.kernels(0).name(), "gemm_tile");
    EXPECT_EQ(c.kernels(0).origin(), v1::SUBMISSION);
    EXPECT_EQ(c.kernels(1).origin(), v1::MEMORY);
    EXPECT_NE(c.kernels(1).name().find("FillFunctor"), std::string::npos);
    EXPECT_GT(c.kernels(0).ms_per_call(), c.kernels(1).ms_per_call());  // largest first
    return;
  }
  FAIL() << "no seed passed";
}

}  // namespace
}  // namespace ptxbench::worker
