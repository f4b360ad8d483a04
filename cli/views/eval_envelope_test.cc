#include "cli/views/eval_envelope.h"

#include <limits>

#include "gtest/gtest.h"

namespace ptxbench::cli {
namespace {

namespace v1 = ::ptxbench::v1;

EvalContext Context() {
  EvalContext c;
  c.evaluation_id = "ev_00000000000000ab";
  c.definition = "gemm_n7168_k5120";
  c.workload_uuids = {"u1"};
  c.kernel_sha256 = std::string(64, 'a');
  c.target_speedup = 1.2;
  c.timestamp = "2026-11-30T00:00:00Z";
  return c;
}

v1::EvalResult Passed(double speedup) {
  v1::EvalResult r;
  r.set_status(v1::PASSED);
  r.set_all_passed(true);
  r.set_min_speedup(speedup);
  r.set_gpu_model("NVIDIA H200");
  r.set_toolkit_version("13.0");
  r.mutable_ptx()->set_sha256(std::string(64, 'b'));
  r.mutable_ptx()->set_virtual_arch("sm_90a");
  (*r.mutable_ptx()->mutable_instruction_counts())["wgmma."] = 12;
  (*r.mutable_ptx()->mutable_architecture_counts())["hopper"] = 12;
  v1::WorkloadTrace* t = r.add_traces();
  t->set_workload_uuid("u1");
  (*t->mutable_axes())["M"] = 8192;
  t->set_status(v1::PASSED);
  t->set_latency_ms(0.5);
  t->set_reference_latency_ms(0.6);
  t->set_speedup(speedup);
  t->set_max_abs_error(0.001);
  t->set_max_rel_error(std::numeric_limits<double>::quiet_NaN());
  return r;
}

TEST(EvalEnvelopeTest, CarriesEveryCompatField) {
  nlohmann::json e = EvalEnvelope(Context(), Passed(1.25));
  for (const char* key : {"schema", "evaluation_id", "task_id", "definition", "workload_uuids",
                          "kernel_sha256", "status", "all_passed", "min_speedup", "target_met",
                          "sanitizer", "compile_log", "ptx", "traces"}) {
    EXPECT_TRUE(e.contains(key)) << key;
  }
  EXPECT_EQ(e["schema"], "ptxbench.eval.v1");
  EXPECT_EQ(e["status"], "PASSED");
  EXPECT_EQ(e["all_passed"], true);
  EXPECT_EQ(e["target_met"], true);
  EXPECT_EQ(e["ptx"]["instruction_counts"]["wgmma."], 12);
  EXPECT_EQ(e["sanitizer"]["requested_runs"], 0);
  EXPECT_TRUE(e["sanitizer"]["clean"].is_null()) << "no run, no verdict";
  ASSERT_EQ(e["traces"].size(), 1u);
  const auto& trace = e["traces"][0];
  EXPECT_EQ(trace["workload"]["axes"]["M"], 8192);
  EXPECT_EQ(trace["evaluation"]["performance"]["speedup_factor"], 1.25);
  EXPECT_TRUE(trace["evaluation"]["correctness"]["max_relative_error"].is_null())
      << "NaN is written as null, never as invalid JSON";
  EXPECT_EQ(trace["evaluation"]["environment"]["hardware"], "NVIDIA H200");
  EXPECT_EQ(EvalExitCode(Passed(1.25)), 0);
}

TEST(EvalEnvelopeTest, BelowTargetAndFailuresAndInfra) {
  EXPECT_EQ(EvalEnvelope(Context(), Passed(1.1))["target_met"], false);

  v1::EvalResult failed;
  failed.set_status(v1::COMPILE_ERROR);
  failed.set_compile_log("kernel.cu(3): error: expected a ';'");
  nlohmann::json e = EvalEnvelope(Context(), failed);
  EXPECT_EQ(e["status"], "COMPILE_ERROR");
  EXPECT_EQ(e["all_passed"], false);
  EXPECT_TRUE(e["min_speedup"].is_null());
  EXPECT_TRUE(e["ptx"].is_null());
  EXPECT_NE(e["compile_log"].get<std::string>().find("expected a ';'"), std::string::npos);
  EXPECT_EQ(EvalExitCode(failed), 1);
  EXPECT_EQ(EvalExitCode(failed, /*compile_only=*/true), 1);
  v1::EvalResult built;
  built.set_status(v1::COMPILED);
  EXPECT_EQ(EvalExitCode(built), 1) << "a build alone is not a pass";
  EXPECT_EQ(EvalExitCode(built, /*compile_only=*/true), 0);

  v1::EvalResult infra = Passed(2.0);
  infra.set_status(v1::INFRA_ERROR);
  infra.set_error("GPU 0 fell off the bus");
  e = EvalEnvelope(Context(), infra);
  EXPECT_EQ(e["status"], "INFRA_ERROR");
  EXPECT_EQ(e["error"], "GPU 0 fell off the bus");
  EXPECT_TRUE(e["traces"].empty());
  EXPECT_EQ(e["all_passed"], false);
  EXPECT_EQ(EvalExitCode(infra), 2);
}

TEST(EvalEnvelopeTest, EvaluationIdsAreFreshHex) {
  std::string a = NewEvaluationId(), b = NewEvaluationId();
  EXPECT_EQ(a.size(), 19u);
  EXPECT_EQ(a.rfind("ev_", 0), 0u);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace ptxbench::cli
