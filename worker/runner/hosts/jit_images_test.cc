#include "worker/runner/hosts/jit_images.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/wait.h>
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
  // The cache `dir_` through a descriptor of its parent, as the harness reads it.
  JitCache Scan(const fs::path& dir) {
    const int parent = open(dir.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    EXPECT_GE(parent, 0);
    JitCache cache = ScanJitCache(parent, dir.filename().string());
    close(parent);
    return cache;
  }
  fs::path dir_;
};

TEST_F(JitImagesTest, TheCubinsOfTheCacheAreNamedByTheirBytes) {
  Write(dir_ / "KEY1" / "matmul_kernel.cubin", "image one");
  Write(dir_ / "KEY2" / "other.cubin", "image two");
  Write(dir_ / "KEY1" / "matmul_kernel.json", "{}");        // not an image
  Write(dir_ / "KEY1" / "cuda_utils.so", "launcher");       // not a GPU image
  const JitCache cache = Scan(dir_);
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
  const JitCache cache = Scan(dir_);
  // The real directory "real" is read itself (it is in the cache): its
  // image counts once, through its own path only.
  EXPECT_EQ(cache.tags, (std::set<std::string>{Tag("behind a linked directory")}));
  // The link, the fifo and the empty file, each said; the first by its name.
  EXPECT_EQ(cache.unread, 3);
  EXPECT_THAT(DescribeJitCache(cache), HasSubstr("3 .cubin not read, the first "));
  const JitCache missing = Scan(dir_ / "missing");
  EXPECT_TRUE(missing.tags.empty());
  EXPECT_THAT(DescribeJitCache(missing), HasSubstr("0 images (no cache: "));
}

// The harness reads the cache after it dropped to its own uid, which cannot
// search the private directory above the JIT's disk: through the descriptor
// held from before, it still reads every image (by path it read none: the
// first GPU run's "0 images built").
TEST_F(JitImagesTest, AUidThatCannotSearchAboveTheCacheReadsItThroughTheDescriptor) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the test drops to another uid";
  const fs::path private_dir = dir_ / "private";
  Write(private_dir / "jit" / "cache" / "KEY1" / "k.cubin", "an image");
  fs::permissions(private_dir, fs::perms::owner_all);  // 0700, root's
  fs::permissions(private_dir / "jit", fs::perms::owner_all | fs::perms::group_read |
                                           fs::perms::group_exec | fs::perms::others_read |
                                           fs::perms::others_exec);
  const int jit = open((private_dir / "jit").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(jit, 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(10);
    const bool by_path = !ScanJitCache(AT_FDCWD, (private_dir / "jit" / "cache").string()).tags.empty();
    const JitCache held = ScanJitCache(jit, "cache");
    _exit(by_path ? 11 : held.tags == std::set<std::string>{Tag("an image")} ? 0 : 12);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  close(jit);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: could not drop; 11: the path was searchable; "
                                       "12: the descriptor did not read the image";
}

}  // namespace
}  // namespace ptxbench::runner
