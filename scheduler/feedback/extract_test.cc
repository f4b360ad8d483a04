#include "scheduler/feedback/extract.h"

#include "absl/strings/str_cat.h"

#include "gtest/gtest.h"

// Suite names start with "feedback_" so that `ctest -R feedback` selects them.
namespace ptxbench::scheduler {
namespace {

TEST(feedback_extract, TakesTheOnlyCppBlock) {
  auto kernel = ExtractKernel("Here it is:\n```cpp\n__global__ void k() {}\n```\nDone.", "cuda");
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(*kernel, "__global__ void k() {}\n");
}

TEST(feedback_extract, LastKernelLikeBlockWinsOverLaterHelperBlock) {
  const char* answer =
      "```cpp\n__global__ void first() {}\n```\n"
      "```cuda\n__global__ void second() {}\nPTXB_EXPORT void run() {}\n```\n"
      "And compile with:\n```cpp\n// nvcc -O3 kernel.cu\n```\n";
  auto kernel = ExtractKernel(answer, "cuda");
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(*kernel, "__global__ void second() {}\nPTXB_EXPORT void run() {}\n");
}

TEST(feedback_extract, FallsBackToLastNonEmptyBlockOfTheLanguage) {
  const char* answer =
      "```cpp\nint helper() { return 1; }\n```\n"
      "```cpp\nint other() { return 2; }\n```\n"
      "```cpp\n   \n```\n"
      "```python\n@triton.jit\ndef k(): pass\n```\n";
  auto kernel = ExtractKernel(answer, "cuda");
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(*kernel, "int other() { return 2; }\n");
}

TEST(feedback_extract, LaunchSyntaxLooksLikeAKernel) {
  const char* answer =
      "```c++\nvoid host() { k<<<1, 32>>>(); }\n```\n"
      "```cpp\nint not_a_kernel;\n```\n";
  EXPECT_EQ(ExtractKernel(answer, "cuda").value(), "void host() { k<<<1, 32>>>(); }\n");
}

TEST(feedback_extract, UnclosedFinalBlockRunsToTheEnd) {
  auto kernel = ExtractKernel("text\n```cpp\n__global__ void k() {\n  // cut off", "cuda");
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(*kernel, "__global__ void k() {\n  // cut off\n");
}

TEST(feedback_extract, NoBlockOfTheLanguageGivesNullopt) {
  EXPECT_FALSE(ExtractKernel("no code at all", "cuda").has_value());
  EXPECT_FALSE(ExtractKernel("```python\nprint(1)\n```", "cuda").has_value());
  EXPECT_FALSE(ExtractKernel("```\n__global__ void k() {}\n```", "cuda").has_value());
  EXPECT_FALSE(ExtractKernel("```cpp\n\n  \n```", "cuda").has_value());
}

TEST(feedback_extract, TagsAreCaseInsensitiveAndMayCarryAttributes) {
  EXPECT_EQ(ExtractKernel("```CUDA title=k.cu\n__global__ void k() {}\n```", "cuda").value(),
            "__global__ void k() {}\n");
  EXPECT_EQ(ExtractKernel("```cu\n__global__ void k() {}\n```", "cuda").value(),
            "__global__ void k() {}\n");
}

TEST(feedback_extract, CrLfLineEndingsAreNormalised) {
  EXPECT_EQ(ExtractKernel("```cpp\r\n__global__ void k() {}\r\n```\r\n", "cuda").value(),
            "__global__ void k() {}\n");
}

TEST(feedback_extract, LongerFenceKeepsInnerTripleBackticks) {
  const char* answer = "````cpp\n// ```cpp inside a comment\n__global__ void k() {}\n````\n";
  EXPECT_EQ(ExtractKernel(answer, "cuda").value(),
            "// ```cpp inside a comment\n__global__ void k() {}\n");
}

TEST(feedback_extract, PtxPrefersBlocksWithAnEntry) {
  const char* answer =
      "```ptx\n.version 8.0\n.target sm_90a\n.visible .entry k() { ret; }\n```\n"
      "```ptx\n// launch: grid=(1,1,1)\n```\n"
      "```cpp\n__global__ void k() {}\n```\n";
  EXPECT_EQ(ExtractKernel(answer, "ptx").value(),
            ".version 8.0\n.target sm_90a\n.visible .entry k() { ret; }\n");
}

TEST(feedback_extract, PtxCarriesItsLaunchSpecAsACommentLine) {
  const char* answer =
      "The module:\n```ptx\n.version 8.0\n.visible .entry k() { ret; }\n```\n"
      "```json\n{\"note\": 1}\n```\n"
      "and how to launch it:\n```json\n{\"entry\": \"k\",\n \"grid\": [1], \"block\": [32]}\n```\n";
  EXPECT_EQ(ExtractKernel(answer, "ptx").value(),
            ".version 8.0\n.visible .entry k() { ret; }\n"
            "// ptxbench-launch: {\"block\":[32],\"entry\":\"k\",\"grid\":[1]}\n");
  // A CUDA answer never gets one.
  EXPECT_EQ(ExtractKernel("```cuda\n__global__ void k() {}\n```\n```json\n{\"entry\": \"k\"}\n```",
                          "cuda")
                .value(),
            "__global__ void k() {}\n");
}

TEST(feedback_extract, TritonUsesPythonBlocks) {
  const char* answer = "```python\n@triton.jit\ndef k(x): pass\n```\n```cpp\nint x;\n```";
  EXPECT_EQ(ExtractKernel(answer, "triton").value(), "@triton.jit\ndef k(x): pass\n");
}

// PTXBench's rule: the last ```python block holding both @triton.jit and
// def run( wins over later python blocks that hold only one of them (a
// usage example, a helper kernel); without one, the last non-empty python
// block; ```py and other tags are not python blocks.
TEST(feedback_extract, TritonTakesTheLastBlockWithAJitKernelAndRun) {
  const char* kernel =
      "import triton\n@triton.jit\ndef k(x): pass\ndef run(x, y):\n    k[(1,)](x)\n";
  const std::string answer = absl::StrCat(
      "```python\n@triton.jit\ndef first(x): pass\ndef run(x, y): pass\n```\n",
      "```python\n", kernel, "```\n",
      "Use it so:\n```python\nrun(a, b)  # def run( is above\n```\n",
      "```python\n@triton.jit\ndef helper(x): pass\n```\n",
      "```py\n@triton.jit\ndef other(x): pass\ndef run(x, y): pass\n```\n");
  EXPECT_EQ(ExtractKernel(answer, "triton").value(), kernel);
  // No block has both: the last non-empty python block.
  EXPECT_EQ(ExtractKernel(
                "```python\ndef run(x): pass\n```\n```python\nx = 1\n```\n```python\n\n```",
                "triton")
                .value(),
            "x = 1\n");
  EXPECT_FALSE(ExtractKernel("```py\n@triton.jit\ndef k(): pass\ndef run(): pass\n```", "triton")
                   .has_value());
  // An unclosed final block runs to the end of the answer.
  EXPECT_EQ(ExtractKernel("```python\nx = 1\n```\n```python\n@triton.jit\ndef k(): pass\n"
                          "def run(a):\n    k[(1,)]()",
                          "triton")
                .value(),
            "@triton.jit\ndef k(): pass\ndef run(a):\n    k[(1,)]()\n");
}

TEST(feedback_extract, ASolutionIsTheJsonBlockWithSourcesAndSpec) {
  const char* answer =
      "The spec I follow:\n```json\n{\"entry\": \"not this\"}\n```\n"
      "```json\n{\"spec\": {\"entry_point\": \"k.cu::run\"}, \"sources\": []}\n```\n"
      "```json\n{\"notes\": 1}\n```\n";
  auto solution = ExtractKernel(answer, "solution");
  ASSERT_TRUE(solution.has_value());
  EXPECT_EQ(*solution, "{\"spec\": {\"entry_point\": \"k.cu::run\"}, \"sources\": []}\n");
  EXPECT_FALSE(ExtractKernel("```cpp\n__global__ void k() {}\n```\n", "solution").has_value());
  EXPECT_EQ(AnswerFence("solution"), "json");
  EXPECT_EQ(AnswerFence("cuda"), "cpp");
  EXPECT_EQ(AnswerFence("ptx"), "ptx");
}

TEST(feedback_extract, UnknownLanguageExtractsNothing) {
  EXPECT_FALSE(ExtractKernel("```cpp\n__global__ void k() {}\n```", "fortran").has_value());
}

}  // namespace
}  // namespace ptxbench::scheduler
