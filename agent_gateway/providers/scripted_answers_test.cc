#include "agent_gateway/providers/scripted_answers.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace ptxbench::agent_gateway {
namespace {

namespace fs = std::filesystem;

class ScriptedAnswersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ptxb_scripted_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    Write("mha_with_lse_d128/answer.cu", "// plain\n");
    Write("mha_with_lse_d128_causal/turn0.cu", "// causal 0\n");
    Write("mha_with_lse_d128_causal/turn1.md", "Thoughts only, no code.");
    Write("mha_with_lse_d128_causal/notes.txt", "ignored");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  static ptxbench::v1::LlmRequest Prompt(const std::string& text) {
    ptxbench::v1::LlmRequest r;
    r.add_messages()->set_role("system");
    r.mutable_messages(0)->set_content("You write kernels for mha_with_lse_d128.");
    auto* user = r.add_messages();
    user->set_role("user");
    user->set_content(text);
    return r;
  }
  fs::path dir_;
};

TEST_F(ScriptedAnswersTest, LongestDefinitionNameInTheTaskPromptWins) {
  auto answers = ScriptedAnswers::Load(dir_.string());
  ASSERT_TRUE(answers.ok()) << answers.status();
  auto causal = (*answers)->Answer(Prompt("Implement mha_with_lse_d128_causal."), 0);
  ASSERT_TRUE(causal.ok()) << causal.status();
  EXPECT_NE(causal->text().find("```cuda\n// causal 0\n```"), std::string::npos) << causal->text();
  EXPECT_EQ(causal->provider(), "scripted");
  EXPECT_TRUE(causal->simulated());
  auto plain = (*answers)->Answer(Prompt("Implement mha_with_lse_d128 please"), 3);
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(plain->text().find("// plain"), std::string::npos);
}

TEST_F(ScriptedAnswersTest, MarkdownIsTheAnswerAsWrittenAndMissingTurnsAreErrors) {
  auto answers = ScriptedAnswers::Load(dir_.string());
  ASSERT_TRUE(answers.ok());
  auto md = (*answers)->Answer(Prompt("mha_with_lse_d128_causal"), 1);
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->text(), "Thoughts only, no code.");
  EXPECT_EQ((*answers)->Answer(Prompt("mha_with_lse_d128_causal"), 2).status().code(),
            absl::StatusCode::kNotFound);
  auto none = (*answers)->Answer(Prompt("gemm_n7168_k5120"), 0);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("have: mha_with_lse_d128"), std::string::npos);
}

// A .py is a Triton answer in a ```python block; beside a .cu of the same
// turn, one answer holds both, so that a CUDA and a Triton experiment of
// one matrix can share the folder.
TEST_F(ScriptedAnswersTest, PythonFilesAreTritonAnswersBesideTheCudaOnes) {
  Write("gemm_n7168_k5120/turn0.py", "@triton.jit\ndef k(): pass\ndef run(A, B, C): pass\n");
  Write("gemm_n7168_k5120/turn0.cu", "// cuda 0\n");
  auto answers = ScriptedAnswers::Load(dir_.string());
  ASSERT_TRUE(answers.ok()) << answers.status();
  auto both = (*answers)->Answer(Prompt("Write gemm_n7168_k5120."), 0);
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_NE(both->text().find("```cuda\n// cuda 0\n```"), std::string::npos) << both->text();
  EXPECT_NE(both->text().find("```python\n@triton.jit\ndef k(): pass\n"), std::string::npos)
      << both->text();
  EXPECT_LT(both->text().find("```cuda"), both->text().find("```python")) << "name order";
}

TEST_F(ScriptedAnswersTest, EmptyOrMissingFolderIsRefused) {
  EXPECT_FALSE(ScriptedAnswers::Load((dir_ / "nope").string()).ok());
  fs::create_directories(dir_ / "empty");
  EXPECT_FALSE(ScriptedAnswers::Load((dir_ / "empty").string()).ok());
}

}  // namespace
}  // namespace ptxbench::agent_gateway
