#include "worker/profile/sanitizer_install.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ptxbench::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A toolkit laid out as CUDA's (this machine has no compute-sanitizer): the
// program is the stand-in that answers --version (testing/fake_ncu.cc).
class SanitizerInstallTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/sanitizer_install_" + std::to_string(getpid());
    fs::create_directories(dir_ + "/cuda/compute-sanitizer");
    fs::create_directories(dir_ + "/cuda/bin");
    program_ = dir_ + "/cuda/compute-sanitizer/compute-sanitizer";
    fs::copy_file(PTXB_FAKE_NCU, program_, fs::copy_options::overwrite_existing);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_, program_;
};

TEST_F(SanitizerInstallTest, TheToolkitsScriptLeadsToItsProgramAndItsDirectory) {
  std::ofstream(dir_ + "/cuda/bin/compute-sanitizer")
      << "#!/bin/sh\nexec \"$(dirname \"$0\")/../compute-sanitizer/compute-sanitizer\" \"$@\"\n";
  chmod((dir_ + "/cuda/bin/compute-sanitizer").c_str(), 0755);
  absl::StatusOr<SanitizerInstall> found = FindSanitizer(dir_ + "/cuda/bin/compute-sanitizer");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->executable, fs::canonical(program_).string());
  EXPECT_EQ(found->root, fs::canonical(dir_ + "/cuda/compute-sanitizer").string());
  EXPECT_EQ(found->version, "2025.3.1.0");
  EXPECT_EQ(found->Describe("/usr/local/cuda/bin/compute-sanitizer"),
            "compute-sanitizer 2025.3.1.0 at /usr/local/cuda/bin/compute-sanitizer");
}

TEST_F(SanitizerInstallTest, ALinkToTheProgramIsFollowed) {
  fs::create_symlink(program_, dir_ + "/cuda/bin/compute-sanitizer");
  absl::StatusOr<SanitizerInstall> found = FindSanitizer(dir_ + "/cuda/bin/compute-sanitizer");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->executable, fs::canonical(program_).string());
}

TEST_F(SanitizerInstallTest, WhatIsMissingIsNamed) {
  EXPECT_EQ(FindSanitizer(dir_ + "/nowhere").status().code(), absl::StatusCode::kNotFound);
  fs::remove(program_);
  std::ofstream(dir_ + "/cuda/bin/compute-sanitizer") << "#!/bin/sh\n";
  absl::StatusOr<SanitizerInstall> found = FindSanitizer(dir_ + "/cuda/bin/compute-sanitizer");
  EXPECT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(found.status().message()), HasSubstr("is a script"));
}

}  // namespace
}  // namespace ptxbench::worker
