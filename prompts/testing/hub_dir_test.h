#ifndef PTXBENCH_PROMPTS_TESTING_HUB_DIR_TEST_H_
#define PTXBENCH_PROMPTS_TESTING_HUB_DIR_TEST_H_

// A fixture for tests of PTXBench prompt hubs (prompts/prompt_hub_test.cc,
// experiment_spec/spec_hub_test.cc): a scratch folder to write a hub's files into,
// and a PromptRegistry of the bundled prompts plus a hub from that folder.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "prompts/prompts.h"

namespace ptxbench::prompts {

class HubDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("prompt_hub_", getpid(), "_",
                        ::testing::UnitTest::GetInstance()->random_seed());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` to `relative` under the folder, creating its folders.
  void Write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = dir_ / relative;
    std::filesystem::create_directories(path.parent_path());
    ASSERT_TRUE(WriteFile(path.string(), text).ok());
  }
  // The bundled prompts plus the hub at `hub` (hub.json or its folder).
  absl::StatusOr<std::unique_ptr<PromptRegistry>> Load(const std::string& hub) {
    return PromptRegistry::Load(PromptRegistry::BundledRoot(), (dir_ / hub).string());
  }

  std::filesystem::path dir_;
};

}  // namespace ptxbench::prompts

#endif  // PTXBENCH_PROMPTS_TESTING_HUB_DIR_TEST_H_
