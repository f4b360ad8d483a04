#include "prompts/targets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/gpu_arch.h"
#include "prompts/prompts.h"
#include "workloads/registry.h"

namespace ptxbench::prompts {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::unique_ptr<PromptRegistry> Bundled() {
  auto registry = PromptRegistry::Load(PromptRegistry::BundledRoot());
  EXPECT_TRUE(registry.ok()) << registry.status();
  return registry.ok() ? *std::move(registry) : nullptr;
}

TEST(TargetsTest, HopperReadsAsItAlwaysDid) {
  const TargetText t = DescribeTargets(DefaultArchitectures());
  EXPECT_EQ(t.target_gpus, "Hopper GPUs (H100 / H200, compute capability 9.0, compiled for sm_90a)");
  EXPECT_EQ(t.headline, "an NVIDIA Hopper GPU (sm_90a)");
  EXPECT_EQ(FillTargets("-gencode arch={{compute}},code={{sm}}.{{build_note}}", t),
            "-gencode arch=compute_90a,code=sm_90a.");
  EXPECT_EQ(FillTargets(".version {{ptx_version}} [{{target_hardware}}]", t),
            ".version 8.0 [\"H100\", \"H200\"]");
}

TEST(TargetsTest, OneBlackwellArchitecture) {
  const TargetText t = DescribeTargets({"sm_100"});
  EXPECT_EQ(t.target_gpus, "Blackwell GPUs (B200, compute capability 10.0, compiled for sm_100a)");
  EXPECT_EQ(t.headline, "an NVIDIA Blackwell GPU (sm_100a)");
  EXPECT_EQ(t.sm, "sm_100a");
  EXPECT_EQ(t.compute, "compute_100a");
  EXPECT_EQ(t.ptx_version, "8.6");
  EXPECT_EQ(t.target_hardware, "\"B200\"");
  EXPECT_THAT(t.build_note, IsEmpty());
}

TEST(TargetsTest, BeforeHopperTheTargetHasNoSuffixAndAnUnknownOneItsName) {
  const TargetText ampere = DescribeTargets({"sm_80"});
  EXPECT_EQ(ampere.target_gpus, "Ampere GPUs (A100, compute capability 8.0, compiled for sm_80)");
  EXPECT_EQ(ampere.compute, "compute_80");
  const TargetText unknown = DescribeTargets({"sm_120"});
  EXPECT_EQ(unknown.target_gpus, "GPUs (compute capability 12.0, compiled for sm_120a)");
  EXPECT_EQ(unknown.headline, "an NVIDIA GPU (sm_120a)");
  EXPECT_EQ(unknown.target_hardware, "\"sm_120\"");
}

TEST(TargetsTest, SeveralArchitecturesSayEachGpuBuildsForItself) {
  const TargetText t = DescribeTargets({"sm_100", "sm_90"});
  EXPECT_EQ(t.sm, "sm_100a");  // the first, as the ABI's command lines show it
  EXPECT_EQ(t.target_gpus,
            "GPUs of compute capability 10.0 (Blackwell: B200) and 9.0 (Hopper: H100 / H200), "
            "each kernel compiled for the GPU that runs it (sm_100a, sm_90a)");
  EXPECT_EQ(t.headline,
            "NVIDIA GPUs of sm_100 (Blackwell) and sm_90 (Hopper); it is built for the GPU that "
            "runs it (sm_100a, sm_90a)");
  EXPECT_EQ(t.build_note,
            " Each GPU builds it for itself: sm_100a on sm_100 (Blackwell), sm_90a on sm_90 "
            "(Hopper); the lines above show the first.");
  EXPECT_EQ(t.target_hardware, "\"B200\", \"H100\", \"H200\"");
}

TEST(TargetsTest, FamiliesAreJudgedByName) {
  EXPECT_THAT(FamiliesNamedBy("hopper-05"), ElementsAre("Hopper"));
  EXPECT_THAT(FamiliesNamedBy("structural_doc/document/arch_param_H100.md"), ElementsAre("Hopper"));
  EXPECT_THAT(FamiliesNamedBy("b200-bf16"), ElementsAre("Blackwell"));
  EXPECT_THAT(FamiliesNamedBy("d/umma_sm100.h"), ElementsAre("Blackwell"));
  EXPECT_THAT(FamiliesNamedBy("d/ptx_knowledge_sm90_plus.md"), IsEmpty());
  EXPECT_THAT(FamiliesNamedBy("ptxb-expert"), IsEmpty());
}

// Every bundled tag renders, for every language, with no placeholder left
// and no other GPU's target: a Blackwell experiment's prompts never say
// sm_90a, a Hopper one's never sm_100a.
TEST(TargetsTest, BundledPromptsSpeakOfTheTargetedGpusOnly) {
  auto registry = Bundled();
  ASSERT_NE(registry, nullptr);
  struct Case {
    std::vector<std::string> architectures;
    std::string must, must_not;
  };
  const std::vector<Case> cases = {{{"sm_90"}, "sm_90a", "sm_100a"},
                                   {{"sm_100"}, "sm_100a", "sm_90a"},
                                   {{"sm_90", "sm_100"}, "sm_100a on sm_100 (Blackwell)", "{{"}};
  int rendered = 0;
  for (const Case& c : cases) {
    for (const std::string& tag : registry->Tags()) {
      const char* taught = registry->IsTritonTag(tag) ? "triton" : "cuda";
      if (!registry->CheckTarget(tag, c.architectures, taught).ok()) continue;
      for (const std::string& language : PromptRegistry::Languages()) {
        auto prompt = registry->RenderSystemPrompt(tag, language, c.architectures);
        ASSERT_TRUE(prompt.ok()) << prompt.status();
        EXPECT_THAT(*prompt, Not(HasSubstr("{{"))) << tag << " " << language;
        EXPECT_THAT(*prompt, HasSubstr(c.must)) << tag << " " << language;
        EXPECT_THAT(*prompt, Not(HasSubstr(c.must_not))) << tag << " " << language;
        ++rendered;
      }
    }
  }
  // 6 tags on Hopper, 2 on Blackwell (ptxb-no-hint, ptxb-triton), 6 on both.
  EXPECT_GE(rendered, (6 + 2 + 6) * 4);
}

TEST(TargetsTest, BlackwellAbiTellsTheBuildItGets) {
  auto registry = Bundled();
  ASSERT_NE(registry, nullptr);
  const std::vector<std::string> blackwell = {"sm_100"};
  auto cuda = registry->RenderSystemPrompt("ptxb-no-hint", "cuda", blackwell);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_THAT(*cuda, HasSubstr("kernels for NVIDIA\nBlackwell GPUs (B200, compute capability 10.0"));
  EXPECT_THAT(*cuda, HasSubstr("nvcc -shared -O3 -gencode arch=compute_100a,code=sm_100a -lineinfo"));
  EXPECT_THAT(*cuda, Not(HasSubstr("Hopper")));
  auto ptx = registry->RenderSystemPrompt("ptxb-no-hint", "ptx", blackwell);
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_THAT(*ptx, HasSubstr("`ptxas -arch=sm_100a -v`"));
  EXPECT_THAT(*ptx, HasSubstr("`.version 8.6` (or later),\n  `.target sm_100a`"));
  auto solution = registry->RenderSystemPrompt("ptxb-no-hint", "solution", blackwell);
  ASSERT_TRUE(solution.ok()) << solution.status();
  EXPECT_THAT(*solution, HasSubstr("\"target_hardware\": [\"B200\"]"));
}

TEST(TargetsTest, TaskPromptNamesTheTargetedGpu) {
  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok()) << definitions.status();
  const workloads::Definition& gemm = **(*definitions)->Find("gemm_n7168_k5120");
  EXPECT_THAT(PromptRegistry::RenderTaskPrompt(gemm, "cuda", 1.0, 3),
              HasSubstr("(op type: gemm) on an NVIDIA Hopper GPU (sm_90a).\n\n"));
  EXPECT_THAT(PromptRegistry::RenderTaskPrompt(gemm, "ptx", 1.0, 3, {"sm_100"}),
              HasSubstr("on an NVIDIA Blackwell GPU (sm_100a).\n\n"));
}

}  // namespace
}  // namespace ptxbench::prompts
