#include "prompts/prompts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "workloads/registry.h"

namespace ptxbench::prompts {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::StartsWith;

std::unique_ptr<PromptRegistry> LoadBundled() {
  auto registry = PromptRegistry::Load(PromptRegistry::BundledRoot());
  EXPECT_TRUE(registry.ok()) << registry.status();
  return registry.ok() ? std::move(*registry) : nullptr;
}

TEST(PromptsBundledTest, HasTheAgreedTags) {
  auto registry = LoadBundled();
  ASSERT_NE(registry, nullptr);
  const std::vector<std::string> tags = registry->Tags();
  EXPECT_THAT(tags, IsSupersetOf({"ptxb-no-hint", "ptxb-basic", "ptxb-wgmma",
                                  "ptxb-expert", "ptxb-triton"}));
  EXPECT_TRUE(std::is_sorted(tags.begin(), tags.end()));
}

TEST(PromptsBundledTest, TagsBuildOnEachOther) {
  auto registry = LoadBundled();
  ASSERT_NE(registry, nullptr);
  EXPECT_THAT(*registry->Documents("ptxb-no-hint"),
              ElementsAre("docs/role.md", "docs/output_format.md"));
  EXPECT_THAT(
      *registry->Documents("ptxb-basic"),
      ElementsAre("docs/role.md", "docs/output_format.md", "docs/hopper_basics.md"));
  EXPECT_THAT(*registry->Documents("ptxb-wgmma"),
              ElementsAre("docs/role.md", "docs/output_format.md",
                          "docs/hopper_basics.md", "docs/wgmma_tma.md"));
  EXPECT_THAT(
      *registry->Documents("ptxb-expert"),
      ElementsAre("docs/role.md", "docs/output_format.md", "docs/hopper_basics.md",
                  "docs/wgmma_tma.md", "docs/pipelining.md"));
}

// A tag asks for profile feedback when its text explains the profile
// section (docs/FORMATS.md, "Experiment specs").
TEST(PromptsBundledTest, OnlyTheProfileTagAsksForProfiles) {
  auto registry = LoadBundled();
  ASSERT_NE(registry, nullptr);
  EXPECT_THAT(*registry->Documents("ptxb-profile"),
              ElementsAre("docs/role.md", "docs/output_format.md", "docs/hopper_basics.md",
                          "docs/profile_feedback.md"));
  EXPECT_TRUE(registry->AsksForProfile("ptxb-profile"));
  for (const char* tag : {"ptxb-no-hint", "ptxb-basic", "ptxb-wgmma", "ptxb-expert", "unknown"}) {
    EXPECT_FALSE(registry->AsksForProfile(tag)) << tag;
  }
}

TEST(PromptsBundledTest, DocumentsAreShort) {
  const fs::path root = PromptRegistry::BundledRoot();
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".md") continue;
    std::ifstream in(entry.path());
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) ++lines;
    EXPECT_LT(lines, 60) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 7);
}

TEST(PromptsBundledTest, NoHintPromptHasRoleFormatAndAbiButNoOptimizationHints) {
  auto registry = LoadBundled();
  ASSERT_NE(registry, nullptr);
  auto prompt = registry->RenderSystemPrompt("ptxb-no-hint", "cuda");
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_THAT(*prompt, StartsWith("# Your role"));
  EXPECT_THAT(*prompt, HasSubstr("# Answer format"));
  EXPECT_THAT(*prompt, HasSubstr("# Submission format: CUDA C++"));
  EXPECT_THAT(*prompt, HasSubstr("#include \"ptxbench/kernel_abi.h\""));
  EXPECT_THAT(*prompt, HasSubstr("PTXB_EXPORT void run("));
  for (const char* hint : {"wgmma", "setmaxnreg", "TMA", "mbarrier", "warpgroup"}) {
    EXPECT_THAT(*prompt, Not(HasSubstr(hint))) << hint;
  }
}

TEST(PromptsBundledTest, ExpertPromptEndsWithTheAbiOfTheLanguage) {
  auto registry = LoadBundled();
  ASSERT_NE(registry, nullptr);
  auto cuda = registry->RenderSystemPrompt("ptxb-expert", "cuda");
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_THAT(*cuda, HasSubstr("# Pipelining and warp specialization"));
  EXPECT_THAT(*cuda, HasSubstr("wgmma"));
  EXPECT_LT(cuda->find("# Your role"), cuda->find("# Hopper (sm_90a) essentials"));
  EXPECT_LT(cuda->find("# Pipelining"), cuda->find("# Submission format: CUDA C++"));
  EXPECT_THAT(*cuda, Not(HasSubstr("# Submission format: raw PTX")));
  auto ptx = registry->RenderSystemPrompt("ptxb-expert", "ptx");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_THAT(*ptx, HasSubstr("# Submission format: raw PTX"));
  EXPECT_THAT(*ptx, HasSubstr("\"shared_mem_bytes\""));
  EXPECT_THAT(*ptx, Not(HasSubstr("# Submission format: CUDA C++")));
  auto solution = registry->RenderSystemPrompt("ptxb-expert", "solution");
  ASSERT_TRUE(solution.ok()) << solution.status();
  EXPECT_THAT(*solution, HasSubstr("# Submission format: a FlashInfer-Trace solution"));
  EXPECT_THAT(*solution, HasSubstr("TVMFFIEnvGetStream"));
}

TEST(PromptsBundledTest, UnknownTagAndLanguage) {
  auto registry = LoadBundled();
  ASSERT_NE(registry, nullptr);
  absl::Status s = registry->Check("hopper-typo");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("unknown prompt tag 'hopper-typo' (known: "));
  EXPECT_THAT(std::string(s.message()), HasSubstr("ptxb-no-hint"));
  EXPECT_EQ(registry->RenderSystemPrompt("hopper-typo", "cuda").status().code(),
            absl::StatusCode::kNotFound);
  auto bad_language = registry->RenderSystemPrompt("ptxb-basic", "tilelang");
  EXPECT_EQ(bad_language.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_language.status().message()),
              HasSubstr("unknown kernel language 'tilelang' (known: cuda, ptx, solution, triton)"));
}

// ---- Task prompt. ----

class PromptsTaskTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto registry = workloads::DefinitionRegistry::Load({});
    ASSERT_TRUE(registry.ok()) << registry.status();
    definitions_ = registry->release();
  }
  static void TearDownTestSuite() { delete definitions_; }
  static const workloads::Definition& Gemm() {
    return **definitions_->Find("gemm_n7168_k5120");
  }
  static inline workloads::DefinitionRegistry* definitions_ = nullptr;
};

TEST_F(PromptsTaskTest, CudaTaskNamesEverything) {
  std::string task = PromptRegistry::RenderTaskPrompt(Gemm(), "cuda", 1.5, 10);
  EXPECT_THAT(task, HasSubstr("`gemm_n7168_k5120`"));
  EXPECT_THAT(task, HasSubstr("CUDA C++"));
  EXPECT_THAT(task, HasSubstr("target of 1.500x"));
  EXPECT_THAT(task, HasSubstr("Turn budget: 10 turns."));
  EXPECT_THAT(task, HasSubstr("Answer with exactly one ```cpp block"));
  EXPECT_THAT(task, HasSubstr("- M=70\n- M=232\n- M=972\n- M=2379\n- M=8192\n"));
  // The definition file, verbatim, in a json block at the end.
  std::string block = absl::StrCat("```json\n", Gemm().json, "```\n");
  EXPECT_THAT(task, EndsWith(block));
  EXPECT_THAT(task, Not(HasSubstr("```ptx")));
}

TEST_F(PromptsTaskTest, SolutionTaskAsksForASolutionJson) {
  std::string task = PromptRegistry::RenderTaskPrompt(Gemm(), "solution", 1.0, 3);
  EXPECT_THAT(task, HasSubstr("as a FlashInfer-Trace solution"));
  EXPECT_THAT(task, HasSubstr("exactly one ```json block holding the complete solution"));
  EXPECT_THAT(task, Not(HasSubstr("```cpp block")));
}

// A Triton task asks for the python block code extraction looks for
// (scheduler/feedback/extract.h), and its system prompt (the bundled
// ptxb-triton tag) ends with PTXBench's destination-passing contract.
TEST_F(PromptsTaskTest, TritonTaskAsksForAPythonModule) {
  std::string task = PromptRegistry::RenderTaskPrompt(Gemm(), "triton", 1.0, 3);
  EXPECT_THAT(task, HasSubstr("Write a Triton kernel (a Python module, kernel.py)"));
  EXPECT_THAT(task, HasSubstr("exactly one ```python block holding the complete kernel.py"));
  EXPECT_THAT(task, Not(HasSubstr("```cpp block")));
  auto registry = LoadBundled();
  ASSERT_NE(registry, nullptr);
  EXPECT_TRUE(registry->IsTritonTag("ptxb-triton"));
  auto system = registry->RenderSystemPrompt("ptxb-triton", "triton", {"sm_90"});
  ASSERT_TRUE(system.ok()) << system.status();
  EXPECT_THAT(*system, HasSubstr("one ```python block with the whole kernel.py"));
  EXPECT_THAT(*system, HasSubstr("import triton.language as tl"));
  EXPECT_THAT(*system, HasSubstr("@triton.jit"));
  EXPECT_THAT(*system, HasSubstr("def run(A, B, C):"));
  EXPECT_THAT(*system, HasSubstr("the definition's inputs, then its outputs"));
  EXPECT_THAT(*system, HasSubstr("LIBRARY_FALLBACK"));
  EXPECT_THAT(*system, HasSubstr("Triton's JIT for sm_90a"));
  EXPECT_THAT(*system, Not(HasSubstr("Hopper (sm_90a) essentials")));
}

TEST_F(PromptsTaskTest, PtxTaskAsksForModuleAndLaunchSpec) {
  std::string task = PromptRegistry::RenderTaskPrompt(Gemm(), "ptx", 2.0, 1);
  EXPECT_THAT(task, HasSubstr("raw PTX"));
  EXPECT_THAT(task, HasSubstr("target of 2.000x"));
  EXPECT_THAT(task, HasSubstr("Turn budget: 1 turn."));
  EXPECT_THAT(task, HasSubstr("exactly one ```ptx block"));
  EXPECT_THAT(task, HasSubstr("exactly one ```json block with the launch spec"));
  EXPECT_THAT(task, Not(HasSubstr("```cpp")));
}

TEST_F(PromptsTaskTest, DefinitionWithoutFileTextIsRenderedFromFields) {
  workloads::Definition d = Gemm();
  d.json.clear();
  std::string task = PromptRegistry::RenderTaskPrompt(d, "cuda", 1.0, 5);
  EXPECT_THAT(task, HasSubstr("\"name\": \"gemm_n7168_k5120\""));
  EXPECT_THAT(task, HasSubstr("\"shape\": ["));
  EXPECT_THAT(task, HasSubstr("def run(A, B):"));
}

TEST_F(PromptsTaskTest, FenceOutlastsBackticksInTheDefinition) {
  workloads::Definition d = Gemm();
  d.json = "{\"description\": \"see ```cpp example```\"}";
  std::string task = PromptRegistry::RenderTaskPrompt(d, "cuda", 1.0, 5);
  EXPECT_THAT(task, HasSubstr("````json\n{\"description\""));
  EXPECT_THAT(task, EndsWith("}\n````\n"));
}

// ---- Registry files: one test per problem. ----

class PromptsRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            absl::StrCat("prompts_test_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    Write("docs/a.md", "doc a\n");
    Write("docs/b.md", "doc b\n");
    Write("docs/c.txt", "doc c\n");
    Write("abi/cuda.md", "cuda abi\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  absl::StatusOr<std::unique_ptr<PromptRegistry>> LoadWith(const std::string& registry) {
    Write("registry.json", registry);
    return PromptRegistry::Load(root_.string());
  }
  std::string Origin() const { return (root_ / "registry.json").string(); }

  fs::path root_;
};

TEST_F(PromptsRegistryTest, ExpandsRecursivelyEachDocumentOnceInFirstOccurrenceOrder) {
  auto registry = LoadWith(R"({"tags": {
      "base": ["docs/a.md", "docs/b.md"],
      "left": ["base", "docs/c.txt"],
      "right": ["docs/b.md", "base"],
      "top": ["right", "left", "docs/a.md"]}})");
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_THAT(*(*registry)->Documents("top"),
              ElementsAre("docs/b.md", "docs/a.md", "docs/c.txt"));
  auto prompt = (*registry)->RenderSystemPrompt("top", "cuda");
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_EQ(*prompt, "doc b\n\ndoc a\n\ndoc c\n\ncuda abi\n");
}

TEST_F(PromptsRegistryTest, ReportsACycleWithItsPath) {
  auto registry = LoadWith(R"({"tags": {
      "a": ["docs/a.md", "b"], "b": ["c"], "c": ["docs/b.md", "a"]}})");
  ASSERT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(registry.status().message()), HasSubstr(Origin()));
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("prompt tags form a cycle: a -> b -> c -> a"));
}

TEST_F(PromptsRegistryTest, ReportsASelfReference) {
  auto registry = LoadWith(R"({"tags": {"a": ["docs/a.md", "a"]}})");
  ASSERT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(registry.status().message()),
            absl::StrCat(Origin(), ": $.tags.a: expected tags that do not form a cycle, found "
                                   "[\"docs/a.md\",\"a\"]; prompt tags form a cycle: a -> a"));
}

TEST_F(PromptsRegistryTest, NamesTagAndPathOfAMissingDocument) {
  auto registry = LoadWith(R"({"tags": {"a": ["docs/a.md", "docs/missing.md"]}})");
  ASSERT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(registry.status().message()),
            absl::StrCat(Origin(),
                         ": $.tags.a[1]: expected a document under the root, found "
                         "\"docs/missing.md\"; tag 'a': no file at ",
                         (root_ / "docs/missing.md").string()));
}

TEST_F(PromptsRegistryTest, NamesAnUnknownTag) {
  auto registry = LoadWith(R"({"tags": {"a": ["docs/a.md", "nope"]}})");
  ASSERT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(registry.status().message()),
            absl::StrCat(Origin(),
                         ": $.tags.a[1]: expected a document or a known tag, found \"nope\"; "
                         "tag 'a' references unknown tag 'nope'"));
}

TEST_F(PromptsRegistryTest, RejectsPathsLeavingTheRoot) {
  auto registry = LoadWith(R"({"tags": {"a": ["../secret.md"]}})");
  ASSERT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("$.tags.a[0]: expected a relative document path that stays inside "
                        "the root, found \"../secret.md\""));
}

TEST_F(PromptsRegistryTest, RejectsMalformedRegistryWithPosition) {
  auto registry = LoadWith("{\"tags\": {\n  \"a\": [\"docs/a.md\",]\n}}");
  ASSERT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr(absl::StrCat(Origin(), ": line 2, column 21: malformed JSON")));
}

TEST_F(PromptsRegistryTest, RejectsUnknownFieldsButAllowsComments) {
  EXPECT_TRUE(LoadWith(R"({"_comment": "x", "tags": {"a": ["docs/a.md"]}})").ok());
  auto registry = LoadWith(R"({"tag": {"a": ["docs/a.md"]}})");
  ASSERT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(registry.status().message()),
            absl::StrCat(Origin(), ": $.tag: expected a known key (tags; keys starting with '_' "
                                   "are comments), found an unknown key"));
}

TEST_F(PromptsRegistryTest, RejectsEmptyTag) {
  auto registry = LoadWith(R"({"tags": {"a": []}})");
  ASSERT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("$.tags.a: expected a non-empty list of documents and tags, found []"));
}

TEST_F(PromptsRegistryTest, MissingRegistryFileIsNotFound) {
  auto registry = PromptRegistry::Load((root_ / "nowhere").string());
  EXPECT_EQ(registry.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(PromptsRegistryTest, MissingAbiFailsOnlyWhenRendered) {
  auto registry = LoadWith(R"({"tags": {"a": ["docs/a.md"]}})");
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_TRUE((*registry)->RenderSystemPrompt("a", "cuda").ok());
  auto ptx = (*registry)->RenderSystemPrompt("a", "ptx");
  EXPECT_EQ(ptx.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(ptx.status().message()), HasSubstr("has no abi/ptx.md"));
}

}  // namespace
}  // namespace ptxbench::prompts
