#include "worker/runner/measure/cost.h"

#include <gtest/gtest.h>

#include "worker/runner/measure/workload_trace.h"
#include "workloads/registry.h"

namespace ptxbench::runner {
namespace {

const workloads::Definition& Bundled(const std::string& name) {
  static auto* registry = [] {
    auto r = workloads::DefinitionRegistry::Load({});
    EXPECT_TRUE(r.ok()) << r.status();
    return r->release();
  }();
  return **registry->Find(name);
}

TEST(Cost, GemmFlopsAndBytes) {
  absl::StatusOr<WorkloadCost> c =
      CostOf(Bundled("gemm_n7168_k5120"), {{"M", 8192}, {"N", 7168}, {"K", 5120}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->flops, 2.0 * 8192 * 7168 * 5120);
  EXPECT_DOUBLE_EQ(c->min_bytes, 2.0 * (8192.0 * 5120 + 7168.0 * 5120 + 8192.0 * 7168));
}

TEST(Cost, AttentionForwardCausalAndBackward) {
  const std::map<std::string, int64_t> axes = {{"B", 4}, {"H", 48}, {"S", 4096}, {"D", 128}};
  const double forward = 4.0 * 4 * 48 * 4096.0 * 4096 * 128;
  EXPECT_DOUBLE_EQ(CostOf(Bundled("mha_with_lse_d128"), axes)->flops, forward);
  EXPECT_DOUBLE_EQ(CostOf(Bundled("mha_with_lse_d128_causal"), axes)->flops, forward / 2);
  // Q, K, V, O bf16 and LSE fp32.
  EXPECT_DOUBLE_EQ(CostOf(Bundled("mha_with_lse_d128"), axes)->min_bytes,
                   4 * (4.0 * 48 * 4096 * 128 * 2) + 4.0 * 48 * 4096 * 4);
}

TEST(Cost, MissingAxisIsAnError) {
  EXPECT_FALSE(CostOf(Bundled("gemm_n7168_k5120"), {{"N", 7168}, {"K", 5120}}).ok());
}

TEST(Roofline, FractionOfTheBoundingCeiling) {
  // 2 TFLOP at 989 TFLOP/s is ~2.02 ms, the bytes take ~0.2 ms: compute bound.
  WorkloadCost cost{2e12, 1e9};
  const auto h200 = PeaksFor("NVIDIA H200");
  ASSERT_TRUE(h200.has_value());
  EXPECT_NEAR(RooflineFraction(cost, h200, 4.044), 0.5, 1e-3);
  // Memory bound: 4.8 GB at 4.8 TB/s is 1 ms.
  EXPECT_NEAR(RooflineFraction({1e9, 4.8e9}, h200, 2.0), 0.5, 1e-9);
  EXPECT_EQ(RooflineFraction(cost, PeaksFor("Tesla T4"), 1.0), 0.0);
  EXPECT_EQ(RooflineFraction(cost, h200, 0.0), 0.0);
  EXPECT_TRUE(PeaksFor("NVIDIA H100 80GB HBM3").has_value());
}

TEST(Roofline, AFigureFasterThanThePeaksIsRefused) {
  const workloads::Definition& gemm = Bundled("gemm_n7168_k5120");
  const WorkloadSpec w{"u", {{"M", 8192}, {"N", 7168}, {"K", 5120}}, {}};
  ptxbench::v1::WorkloadTrace trace;
  std::string log;
  // 601 GFLOP: ~0.61 ms at the H200's 989 TFLOP/s.
  EXPECT_EQ(SetFigures(gemm, w, "NVIDIA H200", 1.0, 0.75, &trace, &log), std::nullopt);
  EXPECT_DOUBLE_EQ(trace.latency_ms(), 1.0);
  EXPECT_DOUBLE_EQ(trace.reference_latency_ms(), 0.75);
  EXPECT_DOUBLE_EQ(trace.speedup(), 0.75);
  EXPECT_NEAR(trace.roofline_fraction(), 2.0 * 8192 * 7168 * 5120 / 989e12 / 1e-3, 0.01);
  EXPECT_NE(log.find("TFLOP/s; reference"), std::string::npos);
  std::optional<std::string> forged = SetFigures(gemm, w, "NVIDIA H200", 0.3, 0.75, &trace, &log);
  ASSERT_TRUE(forged.has_value());
  EXPECT_NE(forged->find("faster than the GPU's peaks allow"), std::string::npos);
  // An unknown GPU has no roofline: nothing to refuse.
  EXPECT_EQ(SetFigures(gemm, w, "Tesla T4", 0.3, 0.75, &trace, &log), std::nullopt);
}

}  // namespace
}  // namespace ptxbench::runner
