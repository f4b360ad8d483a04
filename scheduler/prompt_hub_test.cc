// PTXBench prompt hubs loaded beside the bundled prompts (prompts.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "scheduler/prompts.h"
#include "scheduler/spec.h"
#include "workloads/registry.h"

namespace ptxbench::scheduler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class PromptHubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / absl::StrCat("prompt_hub_test_", getpid(), "_",
                                                    ::testing::UnitTest::GetInstance()->random_seed());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& relative, const std::string& text) {
    const fs::path path = dir_ / relative;
    fs::create_directories(path.parent_path());
    ASSERT_TRUE(WriteFile(path.string(), text).ok());
  }
  absl::StatusOr<std::unique_ptr<PromptRegistry>> Load(const std::string& hub) {
    return PromptRegistry::Load(PromptRegistry::BundledRoot(), (dir_ / hub).string());
  }

  fs::path dir_;
};

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
  const std::string abi = std::string(absl::StripAsciiWhitespace(abi_cuda)) + "\n";
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
  EXPECT_THAT(registry.status().message(), HasSubstr("is also a bundled tag"));
}

TEST_F(PromptHubTest, BadReferencesCyclesAndEscapesAreRefused) {
  Write("hub/docs/a.md", "x");
  Write("hub/hub.json", R"({"a": ["docs/a.md", "nope"]})");
  EXPECT_THAT(Load("hub").status().message(), HasSubstr("'nope', which is no tag of this hub"));
  Write("hub/hub.json", R"({"a": ["b"], "b": ["a"]})");
  EXPECT_THAT(Load("hub").status().message(), HasSubstr("cycle: a -> b -> a"));
  Write("hub/hub.json", R"({"a": ["../../etc/passwd"]})");
  EXPECT_THAT(Load("hub").status().message(), HasSubstr("stay inside"));
  Write("hub/hub.json", R"({"a": []})");
  EXPECT_THAT(Load("hub").status().message(), HasSubstr("non-empty list"));
  EXPECT_FALSE(Load("nowhere").ok());
}

TEST_F(PromptHubTest, WithoutTheHubAPtxbenchTagIsRefusedSayingWhatItNeeds) {
  auto bundled = PromptRegistry::Load(PromptRegistry::BundledRoot());
  ASSERT_TRUE(bundled.ok());
  const absl::Status s = (*bundled)->Check("hopper-no-hint");
  EXPECT_THAT(s.message(), HasSubstr("unknown prompt tag 'hopper-no-hint'"));
  EXPECT_THAT(s.message(), HasSubstr("a PTXBench tag needs its hub: pass --prompts"));
}

// A PTXBench config naming several of its hub's tags runs unchanged once the
// scheduler has the hub, and is refused without it.
TEST_F(PromptHubTest, AConfigWithManyHubTagsExpands) {
  Write("hub/hub.json", R"({"hopper-no-hint": ["d/k.md"], "hopper-05": ["hopper-no-hint", "d/ws.md"],
                           "hopper-07": ["hopper-no-hint", "d/fa3.md"]})");
  for (const char* doc : {"hub/d/k.md", "hub/d/ws.md", "hub/d/fa3.md"}) Write(doc, "x");
  SpecInput input;
  input.text = R"([
    {"num_trajectories": 1, "num_turns": 3, "target_speedup": 1.0, "prompt_tag": "hopper-no-hint"},
    {"num_trajectories": 2, "num_turns": 3, "target_speedup": 1.0, "prompt_tag": "hopper-05"},
    {"num_trajectories": 1, "num_turns": 3, "target_speedup": 1.0, "prompt_tag": "hopper-07"}])";
  input.path = "sweep.json";
  input.default_definition = "gemm_n7168_k5120";
  input.default_model = "gpt-5";
  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok()) << definitions.status();
  auto with_hub = Load("hub");
  ASSERT_TRUE(with_hub.ok()) << with_hub.status();
  auto e = ExpandSpec(input, **definitions, **with_hub, {});
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->trajectories.size(), 4u);
  EXPECT_EQ(e->trajectories[0].prompt_tag, "hopper-no-hint");
  EXPECT_EQ(e->trajectories[2].prompt_tag, "hopper-05");
  EXPECT_EQ(e->trajectories[3].prompt_tag, "hopper-07");

  auto bundled = PromptRegistry::Load(PromptRegistry::BundledRoot());
  ASSERT_TRUE(bundled.ok());
  auto refused = ExpandSpec(input, **definitions, **bundled, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("\"[0].prompt_tag\""));
  EXPECT_THAT(refused.status().message(), HasSubstr("a PTXBench tag needs its hub"));
}

// PTXBench's tags for Triton or for Blackwell would run here as CUDA for
// Hopper: refused at submit, saying why, rather than run as something else.
TEST_F(PromptHubTest, TagsForAnotherLanguageOrGpuAreRefused) {
  Write("hub/hub.json", R"({"hopper-no-hint": ["d/ptx_knowledge_sm90_plus.md"],
      "triton-hopper": ["d/triton_knowledge_sm90_plus.md"],
      "b200-bf16": ["d/ptx_knowledge_sm90_plus.md", "d/arch_param_b200.md"],
      "patterns-05": ["hopper-no-hint", "d/ws.md"], "sneaky": ["d/umma_sm100.h"]})");
  for (const char* doc : {"hub/d/ptx_knowledge_sm90_plus.md", "hub/d/triton_knowledge_sm90_plus.md",
                          "hub/d/arch_param_b200.md", "hub/d/ws.md", "hub/d/umma_sm100.h"}) {
    Write(doc, "x");
  }
  auto registry = Load("hub");
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_TRUE((*registry)->CheckTarget("hopper-no-hint").ok());
  EXPECT_TRUE((*registry)->CheckTarget("patterns-05").ok());
  EXPECT_TRUE((*registry)->CheckTarget("ptxb-expert").ok());
  EXPECT_THAT((*registry)->CheckTarget("triton-hopper").message(),
              HasSubstr("prompt tag 'triton-hopper' asks for Triton kernels"));
  EXPECT_THAT((*registry)->CheckTarget("b200-bf16").message(), HasSubstr("targets Blackwell"));
  EXPECT_THAT(std::string((*registry)->CheckTarget("sneaky").message()),
              HasSubstr("targets Blackwell (hub:d/umma_sm100.h)"));

  SpecInput input;
  input.text = R"([{"num_trajectories": 1, "num_turns": 1, "target_speedup": 1.0,
                    "prompt_tag": "triton-hopper"}])";
  input.path = "quickstart-triton.json";
  input.default_definition = "gemm_n7168_k5120";
  input.default_model = "m";
  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok());
  auto refused = ExpandSpec(input, **definitions, **registry, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("\"[0].prompt_tag\""));
  EXPECT_THAT(refused.status().message(), HasSubstr("asks for Triton kernels"));
}

// `submit --prompts HUB`: the client brings the texts of the hub's tags its
// spec names; a scheduler without the hub runs them, each followed by its own
// ABI description, and the texts are part of the spec's identity.
TEST_F(PromptHubTest, ASubmissionBringsItsHubsTags) {
  Write("hub/hub.json", R"({"hopper-no-hint": ["d/k.md"], "hopper-05": ["hopper-no-hint", "d/ws.md"]})");
  Write("hub/d/k.md", "KNOWLEDGE");
  Write("hub/d/ws.md", "WARP SPECIALIZATION");
  auto client_side = Load("hub");
  ASSERT_TRUE(client_side.ok()) << client_side.status();
  EXPECT_TRUE((*client_side)->IsHubTag("hopper-05"));
  EXPECT_FALSE((*client_side)->IsHubTag("ptxb-no-hint"));
  SpecInput input;
  input.text = R"({"name": "brought", "models": ["m"], "definitions": ["gemm_n7168_k5120"],
                   "prompt_tags": ["hopper-05", "ptxb-basic"], "samples": 1, "num_turns": 1,
                   "target_speedup": 1.0})";
  input.path = "spec.json";
  input.prompts["hopper-05"] = *(*client_side)->TagText("hopper-05");
  input.prompts["unused-tag"] = "not named by the spec";

  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok()) << definitions.status();
  auto scheduler_side = PromptRegistry::Load(PromptRegistry::BundledRoot());  // no hub
  ASSERT_TRUE(scheduler_side.ok());
  auto e = ExpandSpec(input, **definitions, **scheduler_side, {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->submitted_prompts,
            (std::map<std::string, std::string>{{"hopper-05", input.prompts["hopper-05"]}}));
  // Rendered as the scheduler with the hub would render it.
  EXPECT_EQ(*(*scheduler_side)->WithAbi(e->submitted_prompts["hopper-05"], "cuda"),
            *(*client_side)->RenderSystemPrompt("hopper-05", "cuda"));
  // Another text for the tag is another spec.
  SpecInput other = input;
  other.prompts["hopper-05"] = "KNOWLEDGE v2\n\n";
  auto e2 = ExpandSpec(other, **definitions, **scheduler_side, {});
  ASSERT_TRUE(e2.ok()) << e2.status();
  EXPECT_NE(e2->spec_hash, e->spec_hash);
  // ptxbench's own tags keep their one text.
  other.prompts["ptxb-basic"] = "something else";
  auto refused = ExpandSpec(other, **definitions, **scheduler_side, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("is one of ptxbench's own tags; a submission cannot bring another text"));
}

}  // namespace
}  // namespace ptxbench::scheduler
