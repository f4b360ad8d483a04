// PTXBench prompt hubs loaded beside the bundled prompts (prompts.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "prompts/prompts.h"
#include "prompts/targets.h"
#include "prompts/testing/hub_dir_test.h"

namespace ptxbench::prompts {
namespace {

using ::testing::HasSubstr;

using PromptHubTest = ::ptxbench::prompts::HubDirTest;

// The layout of PTXBench's multiturn/prompts: hub.json beside fragments/.
TEST_F(PromptHubTest, RendersAsPtxbenchAssemblesItThenTheAbi) {
  Write("prompts/hub.json", R"({
    "hopper-no-hint": ["structural_doc/document/knowledge.md", "structural_doc/headers/simt.h"],
    "hopper-05": ["hopper-no-hint", "structural_doc/patterns/ws.md"],
    "twice": ["hopper-no-hint", "hopper-no-hint"]
  })");
  Write("prompts/fragments/structural_doc/document/knowledge.md", "KNOWLEDGE\n");
  Write("prompts/fragments/structural_doc/headers/simt.h", "// simt.h");
  Write("prompts/fragments/structural_doc/patterns/ws.md", "WARP SPECIALIZATION");
  auto registry = Load("prompts");  // the folder: its hub.json
  ASSERT_TRUE(registry.ok()) << registry.status();

  auto bundled = PromptRegistry::Load(PromptRegistry::BundledRoot());
  ASSERT_TRUE(bundled.ok());
  const std::string abi_cuda = ReadFile(PromptRegistry::BundledRoot() + "/abi/cuda.md").value();
  const std::string abi =
      FillTargets(absl::StripAsciiWhitespace(abi_cuda), DescribeTargets(DefaultArchitectures())) +
      "\n";
  const std::string base = "KNOWLEDGE\n\n\n// simt.h\n\n";
  EXPECT_EQ(*(*registry)->RenderSystemPrompt("hopper-no-hint", "cuda"), base + abi);
  EXPECT_EQ(*(*registry)->RenderSystemPrompt("hopper-05", "cuda"),
            base + "\n\n" + "WARP SPECIALIZATION\n\n" + abi);
  // Repeats are kept, as PTXBench keeps them.
  EXPECT_EQ(*(*registry)->RenderSystemPrompt("twice", "cuda"),
            base + "\n\n" + base + "\n\n" + abi);
  // The bundled tags stay, under their own names.
  EXPECT_TRUE((*registry)->Check("ptxb-no-hint").ok());
  EXPECT_THAT((*registry)->Origin(), HasSubstr("hub.json"));
}

// The layout of PTXBench's fib_runtime: prompt_configs/hub.json, with entries
// relative to the folder two levels up.
TEST_F(PromptHubTest, FindsTheDocumentsTwoLevelsUp) {
  Write("fib_runtime/multiturn/prompt_configs/hub.json",
        R"({"hopper-arch-only": ["structural_doc/document/arch_param_h100.md"]})");
  Write("fib_runtime/structural_doc/document/arch_param_h100.md", "132 SMs");
  auto registry = Load("fib_runtime/multiturn/prompt_configs/hub.json");
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_THAT(*(*registry)->RenderSystemPrompt("hopper-arch-only", "ptx"),
              ::testing::StartsWith("132 SMs\n\n"));
}

TEST_F(PromptHubTest, AMissingDocumentIsNamedWithItsTag) {
  Write("hub/hub.json", R"({"a": ["docs/here.md"], "b": ["docs/missing.md"]})");
  Write("hub/fragments/docs/here.md", "x");
  auto registry = Load("hub");
  ASSERT_FALSE(registry.ok());
  EXPECT_THAT(registry.status().message(),
              HasSubstr("tag 'b': document docs/missing.md not found"));
}

TEST_F(PromptHubTest, ANameMayNotMeanTwoPrompts) {
  Write("hub/hub.json", R"({"ptxb-no-hint": ["docs/a.md"]})");
  Write("hub/docs/a.md", "x");
  auto registry = Load("hub");
  ASSERT_FALSE(registry.ok());
  EXPECT_THAT(registry.status().message(),
              HasSubstr("$.ptxb-no-hint: expected a tag name no bundled tag has, found "
                        "\"ptxb-no-hint\"; prompt tag 'ptxb-no-hint' is also a bundled tag"));
}

TEST_F(PromptHubTest, BadReferencesCyclesAndEscapesAreRefused) {
  Write("hub/docs/a.md", "x");
  Write("hub/hub.json", R"({"a": ["docs/a.md", "nope"]})");
  EXPECT_THAT(Load("hub").status().message(),
              HasSubstr("hub.json: $.a[1]: expected a tag of this hub or a document (a document "
                        "entry holds a '/'), found \"nope\"; tag 'a' references 'nope', which "
                        "is no tag of this hub"));
  Write("hub/hub.json", R"({"a": ["b"], "b": ["a"]})");
  EXPECT_THAT(Load("hub").status().message(), HasSubstr("cycle: a -> b -> a"));
  Write("hub/hub.json", R"({"a": ["../../etc/passwd"]})");
  EXPECT_THAT(Load("hub").status().message(),
              HasSubstr("$.a[0]: expected a relative document path that stays inside the "
                        "hub's folder, found \"../../etc/passwd\""));
  Write("hub/hub.json", R"({"a": []})");
  EXPECT_THAT(Load("hub").status().message(),
              HasSubstr("$.a: expected a non-empty list of documents and tags, found []"));
  EXPECT_FALSE(Load("nowhere").ok());
}

TEST_F(PromptHubTest, WithoutTheHubAPtxbenchTagIsRefusedSayingWhatItNeeds) {
  auto bundled = PromptRegistry::Load(PromptRegistry::BundledRoot());
  ASSERT_TRUE(bundled.ok());
  const absl::Status s = (*bundled)->Check("hopper-no-hint");
  EXPECT_THAT(s.message(), HasSubstr("unknown prompt tag 'hopper-no-hint'"));
  EXPECT_THAT(s.message(), HasSubstr("a PTXBench tag needs its hub: pass --prompts"));
}

// PTXBench's tags for Triton in a CUDA experiment (and CUDA tags in a
// Triton one), or for a GPU family the experiment does not target, would run
// as something they were not written for: CheckTarget says why, so that
// submit refuses them (spec_hub_test.cc).
TEST_F(PromptHubTest, TagsForAnotherLanguageOrGpuAreNamed) {
  Write("hub/hub.json", R"({"hopper-no-hint": ["d/ptx_knowledge_sm90_plus.md"],
      "triton-hopper": ["d/triton_knowledge_sm90_plus.md"],
      "triton-blackwell-tma": ["d/tma.md"],
      "b200-bf16": ["d/ptx_knowledge_sm90_plus.md", "d/arch_param_b200.md"],
      "patterns-05": ["hopper-no-hint", "d/ws.md"], "sneaky": ["d/umma_sm100.h"]})");
  for (const char* doc : {"hub/d/ptx_knowledge_sm90_plus.md", "hub/d/triton_knowledge_sm90_plus.md",
                          "hub/d/arch_param_b200.md", "hub/d/ws.md", "hub/d/tma.md",
                          "hub/d/umma_sm100.h"}) {
    Write(doc, "x");
  }
  auto registry = Load("hub");
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_TRUE((*registry)->CheckTarget("hopper-no-hint").ok());
  EXPECT_TRUE((*registry)->CheckTarget("patterns-05").ok());
  EXPECT_TRUE((*registry)->CheckTarget("ptxb-expert").ok());
  EXPECT_THAT((*registry)->CheckTarget("triton-hopper").message(),
              HasSubstr("prompt tag 'triton-hopper' asks for Triton kernels and the "
                        "experiment's language is cuda: set \"language\": \"triton\""));
  EXPECT_TRUE((*registry)->IsTritonTag("triton-hopper"));
  EXPECT_FALSE((*registry)->IsTritonTag("hopper-no-hint"));
  EXPECT_THAT(std::string((*registry)->CheckTarget("b200-bf16").message()),
              HasSubstr("is written for Blackwell GPUs (b200-bf16) and the "
                        "experiment targets sm_90 (Hopper): name \"blackwell\" in the "
                        "experiment's \"architectures\""));
  EXPECT_THAT(std::string((*registry)->CheckTarget("sneaky").message()),
              HasSubstr("written for Blackwell GPUs (hub:d/umma_sm100.h)"));

  // A Blackwell experiment takes the Blackwell tags and refuses the Hopper
  // ones (the bundled tags from ptxb-basic on teach Hopper's wgmma).
  const std::vector<std::string> blackwell = {"sm_100", "sm_103"};
  EXPECT_TRUE((*registry)->CheckTarget("b200-bf16", blackwell).ok());
  EXPECT_TRUE((*registry)->CheckTarget("triton-blackwell-tma", blackwell, "triton").ok());
  EXPECT_THAT(std::string((*registry)->CheckTarget("triton-blackwell-tma", {"sm_90"}, "triton")
                              .message()),
              HasSubstr("is written for Blackwell GPUs (triton-blackwell-tma)"));
  EXPECT_TRUE((*registry)->CheckTarget("sneaky", blackwell).ok());
  EXPECT_TRUE((*registry)->CheckTarget("ptxb-no-hint", blackwell).ok());
  EXPECT_THAT(std::string((*registry)->CheckTarget("hopper-no-hint", blackwell).message()),
              HasSubstr("is written for Hopper GPUs (hopper-no-hint) and the experiment targets "
                        "sm_100 (Blackwell), sm_103 (Blackwell): name \"hopper\""));
  EXPECT_THAT(std::string((*registry)->CheckTarget("ptxb-basic", blackwell).message()),
              HasSubstr("Hopper GPUs (docs/hopper_basics.md)"));
  EXPECT_THAT(std::string((*registry)->CheckTarget("triton-hopper", blackwell).message()),
              HasSubstr("asks for Triton kernels"));
  // In a Triton experiment, a Triton tag is targeted like any other: Hopper's
  // on Hopper, not on Blackwell; and a CUDA tag is refused whatever its GPU.
  EXPECT_TRUE((*registry)->CheckTarget("triton-hopper", {"sm_90"}, "triton").ok());
  EXPECT_THAT(std::string((*registry)->CheckTarget("triton-hopper", blackwell, "triton").message()),
              HasSubstr("is written for Hopper GPUs (triton-hopper) and the experiment targets "
                        "sm_100 (Blackwell)"));
  EXPECT_THAT(
      std::string((*registry)->CheckTarget("hopper-no-hint", {"sm_90"}, "triton").message()),
              HasSubstr("prompt tag 'hopper-no-hint' asks for CUDA or PTX kernels and the "
                        "experiment's language is triton"));
  EXPECT_TRUE((*registry)->CheckTarget("ptxb-triton", blackwell, "triton").ok());
  // One that targets both takes both.
  EXPECT_TRUE((*registry)->CheckTarget("b200-bf16", {"sm_100", "sm_90"}).ok());
  EXPECT_TRUE((*registry)->CheckTarget("hopper-no-hint", {"sm_100", "sm_90"}).ok());
}

}  // namespace
}  // namespace ptxbench::prompts
