// GPU tests of references and evaluations on a FlashInfer-Trace dataset
// (examples/flashinfer_trace): an operator with only a PyTorch reference (RMSNorm, with a
// weight from a safetensors file and eps from a scalar source), and an
// attention definition whose causality only its namespaced tag states,
// checked against a causal reference, native or PyTorch. The PyTorch
// reference host runs on $PTXBENCH_TEST_TORCH_PYTHON (default: python3 on
// PATH). Each test skips with "no CUDA GPU: ..." where there is none.

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "testing/require_gpu.h"
#include "worker/gpu_eval.h"
#include "worker/harness_process.h"
#include "worker/runner/wire/job.h"
#include "worker/torch_probe.h"
#include "workloads/registry.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;

// The Python the PyTorch reference host runs on: $PTXBENCH_TEST_TORCH_PYTHON,
// else python3 on PATH, probed once as a worker probes its --torch-python.
std::string TorchPython() {
  static const worker::TorchProbe* probe = [] {
    const char* python = std::getenv("PTXBENCH_TEST_TORCH_PYTHON");
    return new worker::TorchProbe(ProbeTorch(python != nullptr ? python : "auto"));
  }();
  EXPECT_TRUE(probe->ok()) << probe->why_not;
  return probe->python;
}

class DatasetEvalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PTXB_REQUIRE_GPU();
    workloads::DatasetOptions options;
    options.datasets = {DataDir() + "/examples/flashinfer_trace",
                        DataDir() + "/worker/testdata/small_outputs"};
    auto registry = workloads::DefinitionRegistry::Load(options);
    ASSERT_TRUE(registry.ok()) << registry.status();
    definitions_ = *std::move(registry);
    CompilerOptions c;
    c.abi_include_dir = DataDir() + "/worker/kernel_abi";
    c.cache_dir = (std::filesystem::temp_directory_path() / "ptxb_dataset_eval_test_cache").string();
    compiler_ = std::make_unique<Compiler>(c);
    auto inventory = gpu::DiscoverGpus();
    ASSERT_TRUE(inventory.ok() && !inventory->gpus.empty());
    gpu_ = inventory->gpus[0];
    ASSERT_FALSE(FindRunner().empty()) << "ptxbench-runner not found next to the test";
  }

  v1::EvalResult Eval(const std::string& definition, const std::string& source,
                      runner::ReferenceChoice reference = runner::ReferenceChoice::kAuto) {
    GpuEvalOptions o;
    o.runner_path = FindRunner();
    o.deadline = absl::Minutes(6);
    o.torch_python = TorchPython();
    o.reference = reference;
    GpuEvaluator evaluator(compiler_.get(), definitions_.get(), o, "test", "test-toolkit");
    v1::EvalRequest r;
    r.set_definition(definition);
    r.set_language("cuda");
    r.set_kernel_source(source);
    r.set_kernel_sha256(Sha256Hex(source));
    r.set_mode(v1::FULL);
    bool suspect = false;
    v1::EvalResult result = evaluator.Evaluate(r, gpu_, &suspect);
    std::cout << definition << ": " << v1::EvalStatus_Name(result.status()) << " " << result.error()
              << "\n";
    for (const v1::WorkloadTrace& t : result.traces()) {
      std::cout << " | " << t.workload_uuid() << " " << v1::EvalStatus_Name(t.status()) << " "
                << t.latency_ms() << " ms vs " << t.reference() << " " << t.reference_latency_ms()
                << " ms, max abs " << t.max_abs_error();
      for (const std::string& e : t.errors()) std::cout << "\n    error: " << e;
      std::cout << "\n  log:\n" << t.log();
    }
    std::cout << "  wall " << result.wall_time_ms() << " ms\n" << result.compile_log().substr(0, 2000);
    EXPECT_FALSE(suspect);
    return result;
  }

  static std::string Kernel(const std::string& path) {
    return ReadFile(DataDir() + "/worker/testdata/" + path).value_or("");
  }

  std::unique_ptr<workloads::DefinitionRegistry> definitions_;
  std::unique_ptr<Compiler> compiler_;
  gpu::GpuInfo gpu_;
};

TEST_F(DatasetEvalTest, AnOperatorWithOnlyAPyTorchReferenceIsEvaluatedEndToEnd) {
  v1::EvalResult r = Eval("rmsnorm_h4096", Kernel("rmsnorm/rmsnorm.cu"));
  ASSERT_EQ(r.status(), v1::PASSED) << r.error();
  ASSERT_EQ(r.traces_size(), 3);
  for (const v1::WorkloadTrace& t : r.traces()) {
    EXPECT_EQ(t.reference(), "PyTorch");
    EXPECT_GT(t.reference_latency_ms(), 0);
    EXPECT_GT(t.latency_ms(), 0);
    EXPECT_EQ(t.matched_ratio(), 1.0);
  }
}

// A definition whose outputs are all far below atol (worker/testdata/
// small_outputs): zeros pass element by element, and are INCORRECT as a
// constant output where the reference's vary; the honest kernel passes.
TEST_F(DatasetEvalTest, ZerosWhereTheOutputsAreSmallAreIncorrect) {
  v1::EvalResult honest = Eval("scale_1e-4", Kernel("small_outputs/scale.cu"));
  ASSERT_EQ(honest.status(), v1::PASSED) << honest.error();
  v1::EvalResult zeros = Eval("scale_1e-4", Kernel("small_outputs/zeros.cu"));
  ASSERT_EQ(zeros.traces_size(), 1);
  EXPECT_EQ(zeros.traces(0).status(), v1::INCORRECT_NUMERICAL);
  std::string errors;
  for (const std::string& e : zeros.traces(0).errors()) errors += e + "\n";
  EXPECT_TRUE(absl::StrContains(errors, "a constant output is incorrect")) << errors;
}

TEST_F(DatasetEvalTest, TheWeightFromTheSafetensorsFileIsTheOneChecked) {
  // The file's weight is 1 + (37 i mod 101) / 200, never all ones: a kernel
  // that leaves it out fails where the file gives it (and where it is drawn).
  const std::string source = absl::StrReplaceAll(
      Kernel("rmsnorm/rmsnorm.cu"), {{"kUseWeight = true", "kUseWeight = false"}});
  v1::EvalResult r = Eval("rmsnorm_h4096", source);
  ASSERT_EQ(r.traces_size(), 3);
  for (const v1::WorkloadTrace& t : r.traces()) {
    EXPECT_EQ(t.status(), v1::INCORRECT_NUMERICAL) << t.workload_uuid();
  }
}

TEST_F(DatasetEvalTest, ADatasetCausalAttentionIsCheckedAgainstACausalReference) {
  for (const runner::ReferenceChoice reference :
       {runner::ReferenceChoice::kAuto, runner::ReferenceChoice::kPyTorch}) {
    const std::string expected_reference =
        reference == runner::ReferenceChoice::kAuto ? "cuDNN SDPA" : "PyTorch";
    v1::EvalResult causal = Eval("ds_attention_prefill_h8",
                                 Kernel("attention/mha_with_lse_d128_causal.cu"), reference);
    ASSERT_EQ(causal.status(), v1::PASSED) << causal.error();
    ASSERT_EQ(causal.traces_size(), 2);
    EXPECT_EQ(causal.traces(0).reference(), expected_reference);
    // Full attention is what the tag rules out.
    v1::EvalResult full =
        Eval("ds_attention_prefill_h8", Kernel("attention/mha_with_lse_d128.cu"), reference);
    ASSERT_EQ(full.traces_size(), 2);
    for (const v1::WorkloadTrace& t : full.traces()) {
      EXPECT_EQ(t.status(), v1::INCORRECT_NUMERICAL) << expected_reference;
    }
  }
}

// The native references (cuBLAS, cuDNN SDPA) against the definitions' own
// PyTorch references, on every workload of every bundled definition and of
// the dataset's attention: reference-only runs of ptxbench-runner that time
// the PyTorch reference and check its outputs against the native one's, as
// a candidate's are checked (job.h compare_references).
TEST(ReferenceAgreementTest, NativeReferencesAgreeWithThePyTorchOnes) {
  PTXB_REQUIRE_GPU();
  workloads::DatasetOptions options;
  options.datasets = {DataDir() + "/examples/flashinfer_trace"};
  auto registry = workloads::DefinitionRegistry::Load(options);
  ASSERT_TRUE(registry.ok()) << registry.status();
  const std::string runner = FindRunner();
  ASSERT_FALSE(runner.empty());
  for (const char* name : {"gemm_n7168_k5120", "mha_with_lse_d128", "mha_with_lse_d128_causal",
                           "mha_bwd_d128", "mha_bwd_d128_causal", "ds_attention_prefill_h8"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<const workloads::Definition*> d = (*registry)->Find(name);
    ASSERT_TRUE(d.ok()) << d.status();
    runner::RunnerJob job;
    job.reference_only = true;
    job.compare_references = true;
    job.definition_json = (*d)->json;
    for (const workloads::Workload& w : (*d)->workloads) {
      job.workloads.push_back({w.uuid, *(*d)->AxisValues(w), {}});
    }
    job.seed = 20261201;
    job.trials = 2;
    job.warmup_calls = 2;
    job.timed_calls = 5;
    job.isolation.candidate_host = FindCandidateHost(runner);
    job.torch = TorchHostBeside(runner, TorchPython());
    HarnessProcessOptions harness;
    harness.argv = {runner, "--job", "{dir}/job.json", "--out", "{dir}/results.jsonl"};
    harness.files = {{"job.json", runner::SerializeJob(job)}};
    harness.collect = {"results.jsonl"};
    harness.deadline = absl::Minutes(8);
    harness.gpu_index = 0;
    absl::StatusOr<HarnessProcessOutcome> out = RunHarnessProcess(harness);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->status, v1::EVAL_STATUS_UNSPECIFIED) << out->diagnostic;
    const runner::RunnerOutput result = runner::ParseRunnerOutput(out->collected["results.jsonl"]);
    ASSERT_EQ(result.traces.size(), job.workloads.size());
    for (const v1::WorkloadTrace& t : result.traces) {
      std::cout << name << " " << t.workload_uuid() << ": " << v1::EvalStatus_Name(t.status())
                << ", " << t.reference() << "; PyTorch " << t.reference_latency_ms()
                << " ms; max abs " << t.max_abs_error() << ", max rel " << t.max_rel_error()
                << ", matched " << t.matched_ratio() << "\n";
      for (const std::string& e : t.errors()) std::cout << "  error: " << e << "\n";
      EXPECT_EQ(t.status(), v1::PASSED) << t.log();
      EXPECT_GT(t.reference_latency_ms(), 0);
      EXPECT_NE(t.reference().find("checked against cu"), std::string::npos) << t.reference();
    }
  }
}

}  // namespace
}  // namespace ptxbench::worker
