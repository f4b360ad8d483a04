#include "worker/runner/jit_images.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/hash.h"

namespace ptxbench::runner {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class JitImagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("jit_images_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "KEY1");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
  }
  static std::string Tag(const std::string& bytes) { return Sha256Hex(bytes).substr(0, 16); }
  fs::path dir_;
};

TEST_F(JitImagesTest, TheCubinsOfTheCacheAreNamedByTheirBytes) {
  Write(dir_ / "KEY1" / "matmul_kernel.cubin", "image one");
  Write(dir_ / "KEY2" / "other.cubin", "image two");
  Write(dir_ / "KEY1" / "matmul_kernel.json", "{}");        // not an image
  Write(dir_ / "KEY1" / "cuda_utils.so", "launcher");       // not a GPU image
  const JitCache cache = ScanJitCache(dir_.string());
  EXPECT_EQ(cache.tags, (std::set<std::string>{Tag("image one"), Tag("image two")}));
  EXPECT_EQ(cache.files, 4);
  EXPECT_EQ(cache.directories, 3);
  const std::string one = Tag("image one"), two = Tag("image two");
  const std::string& first = std::min(one, two);
  const std::string& second = std::max(one, two);
  EXPECT_EQ(DescribeJitCache(cache),
            "2 images " + first + ", " + second + " (cache: 4 files in 3 directories)");
}

TEST_F(JitImagesTest, WhatTheJitHostLeftAsATrapIsNotFollowed) {
  Write(dir_ / "outside.bin", "a vendor image");
  fs::create_symlink(dir_ / "outside.bin", dir_ / "KEY1" / "linked.cubin");
  fs::create_directories(dir_ / "real");
  Write(dir_ / "real" / "deep.cubin", "behind a linked directory");
  fs::create_directory_symlink(dir_ / "real", dir_ / "KEY1" / "dirlink");
  Write(dir_ / "a" / "b" / "c" / "too_deep.cubin", "too deep");
  ASSERT_EQ(mkfifo((dir_ / "KEY1" / "fifo.cubin").c_str(), 0600), 0);  // would block a reader
  Write(dir_ / "KEY1" / "empty.cubin", "");
  const JitCache cache = ScanJitCache(dir_.string());
  // The real directory "real" is read itself (it is in the cache): its
  // image counts once, through its own path only.
  EXPECT_EQ(cache.tags, (std::set<std::string>{Tag("behind a linked directory")}));
  // The link, the fifo and the empty file, each said; the first by its name.
  EXPECT_EQ(cache.unread, 3);
  EXPECT_THAT(DescribeJitCache(cache), HasSubstr("3 .cubin not read, the first "));
  const JitCache missing = ScanJitCache((dir_ / "missing").string());
  EXPECT_TRUE(missing.tags.empty());
  EXPECT_THAT(DescribeJitCache(missing), HasSubstr("0 images (no cache: "));
}

}  // namespace
}  // namespace ptxbench::runner
