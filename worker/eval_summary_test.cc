#include "worker/eval_summary.h"

#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "gtest/gtest.h"
#include "worker/simulated_evaluator.h"

// Suite names start with "simulated_" so that `ctest -R simulated` selects them.
namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;

struct Summary {
  v1::EvalStatus status;
  bool all_passed;
  double min_speedup;
};

Summary Of(const v1::EvalResult& r) { return {r.status(), r.all_passed(), r.min_speedup()}; }

// The worker's summary of `result`'s traces, starting from a result whose
// summary fields say nothing.
Summary Resummarized(v1::EvalResult result) {
  result.clear_status();
  result.clear_all_passed();
  result.set_min_speedup(-1);
  SummarizeTraces(result);
  return Of(result);
}

void ExpectSame(const Summary& a, const Summary& b, const std::string& what) {
  EXPECT_EQ(v1::EvalStatus_Name(a.status), v1::EvalStatus_Name(b.status)) << what;
  EXPECT_EQ(a.all_passed, b.all_passed) << what;
  EXPECT_EQ(a.min_speedup, b.min_speedup) << what;
}

// The worker's rule on hand-built workload results, each case once.
TEST(simulated_summary, TheWorkersSummaryOfHandBuiltWorkloadResults) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const struct {
    const char* name;
    std::vector<std::pair<v1::EvalStatus, double>> traces;
    Summary want;
  } cases[] = {
      {"all passed", {{v1::PASSED, 1.5}, {v1::PASSED, 0.7}}, {v1::PASSED, true, 0.7}},
      {"one failed", {{v1::PASSED, 1.5}, {v1::INCORRECT_NUMERICAL, 0}},
       {v1::INCORRECT_NUMERICAL, false, 0}},
      {"failed, timed", {{v1::PASSED, 1.5}, {v1::TIMEOUT, 3.0}}, {v1::TIMEOUT, false, 0}},
      {"first failure wins", {{v1::RUNTIME_ERROR, 0}, {v1::INCORRECT_SHAPE, 0}},
       {v1::RUNTIME_ERROR, false, 0}},
      {"fallback", {{v1::LIBRARY_FALLBACK, 0}, {v1::PASSED, 1.1}},
       {v1::LIBRARY_FALLBACK, false, 0}},
      {"not timed", {{v1::PASSED, 2.0}, {v1::PASSED, 0}, {v1::PASSED, kNaN}},
       {v1::PASSED, true, 2.0}},
      {"none timed", {{v1::PASSED, 0}}, {v1::PASSED, true, 0}},
      {"infinite", {{v1::PASSED, kInf}}, {v1::PASSED, true, 0}},
      {"no traces", {}, {v1::PASSED, false, 0}},
  };
  for (const auto& c : cases) {
    v1::EvalResult r;
    for (const auto& [status, speedup] : c.traces) {
      v1::WorkloadTrace* t = r.add_traces();
      t->set_status(status);
      t->set_speedup(speedup);
    }
    ExpectSame(Resummarized(r), c.want, c.name);
  }
}

TEST(simulated_summary, AnInfrastructureFailureCarriesItsTracesError) {
  v1::EvalResult r;
  r.add_traces()->set_status(v1::PASSED);
  v1::WorkloadTrace* t = r.add_traces();
  t->set_status(v1::INFRA_ERROR);
  t->add_errors("the runner lost its GPU");
  SummarizeTraces(r);
  EXPECT_EQ(r.status(), v1::INFRA_ERROR);
  EXPECT_EQ(r.error(), "the runner lost its GPU");
}

v1::EvalRequest Request(int variant, absl::string_view language, absl::string_view body) {
  v1::EvalRequest r;
  r.set_definition("gemm_test");
  r.set_language(std::string(language));
  r.set_kernel_source(absl::StrCat(body, "// variant ", variant, "\n"));
  r.set_kernel_sha256(Sha256Hex(r.kernel_source()));
  for (const char* u : {"wa", "wb", "wc"}) r.add_workload_uuids(u);
  r.set_mode(v1::FULL);
  return r;
}

// The acceptance: the simulated evaluator summarizes its workload
// results as the real worker does. Every outcome it makes (passed, a
// workload incorrect, a library fallback, a compile error) is summarized
// again by the worker's path from its traces alone, and must read the same:
// a simulated INCORRECT_NUMERICAL once kept the passed workloads' minimum
// speedup where the worker writes 0.
TEST(simulated_summary, TheSimulatedEvaluatorSummarizesAsTheWorkerDoes) {
  SimulatedEvaluator evaluator({.seed = 7, .worker_id = "w", .gpu_model = "Simulated H200"});
  std::map<v1::EvalStatus, int> seen;
  for (int v = 0; v < 300; ++v) {
    for (const auto& [language, body] : std::vector<std::pair<const char*, const char*>>{
             {"cuda", "__global__ void k(float* y) { y[0] = 1; }\n"},
             {"triton", "import torch\n\ndef run(A, B, C):\n    C.copy_(torch.matmul(A, B.T))\n"}}) {
      const v1::EvalResult r = evaluator.Evaluate(Request(v, language, body));
      if (r.traces().empty()) continue;  // nothing to summarize (a compile error)
      ++seen[r.status()];
      ExpectSame(Of(r), Resummarized(r), absl::StrCat(language, " variant ", v));
    }
  }
  EXPECT_GT(seen[v1::PASSED], 0);
  EXPECT_GT(seen[v1::INCORRECT_NUMERICAL], 0);
  EXPECT_GT(seen[v1::LIBRARY_FALLBACK], 0);
}

}  // namespace
}  // namespace ptxbench::worker
