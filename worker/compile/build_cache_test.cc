#include "worker/compile/build_cache.h"

#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace ptxbench::worker {
namespace {
namespace fs = std::filesystem;
using std::chrono::hours;
using std::chrono::minutes;

class BuildCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "build_cache_test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // An entry of `bytes` (plus its small result file) last used `age` ago;
  // without a result file it is an unfinished build folder.
  void Entry(const std::string& name, size_t bytes, fs::file_time_type::duration age,
             bool finished = true) {
    const fs::path entry = dir_ / name;
    fs::create_directories(entry);
    std::ofstream(entry / "kernel.so") << std::string(bytes, 'x');
    const auto when = fs::file_time_type::clock::now() - age;
    if (finished) {
      std::ofstream(entry / BuildCache::kUseMark) << "{}";
      fs::last_write_time(entry / BuildCache::kUseMark, when);
    }
    fs::last_write_time(entry, when);
  }
  bool Has(const std::string& name) const { return fs::exists(dir_ / name); }
  // An entry's name: a cache key (64 hex digits) ending in `c`.
  static std::string Key(char c) { return std::string(63, '0') + c; }

  fs::path dir_;
};

TEST_F(BuildCacheTest, RemovesTheLeastRecentlyUsedDownToTheBound) {
  Entry(Key('a'), 1000, hours(3));
  Entry(Key('b'), 1000, hours(2));
  Entry(Key('c'), 1000, hours(1));
  BuildCache cache(dir_.string(), 2100, absl::Minutes(30));
  const BuildCache::Pruned pruned = cache.Prune();
  EXPECT_FALSE(Has(Key('a')));
  EXPECT_TRUE(Has(Key('b')));
  EXPECT_TRUE(Has(Key('c')));
  EXPECT_EQ(pruned.entries, 1);
  EXPECT_EQ(pruned.bytes, 1002u);  // its module and its result file
  EXPECT_EQ(pruned.kept, 2004u);
}

TEST_F(BuildCacheTest, NothingUsedWithinTheGraceGoes) {
  Entry(Key('a'), 1000, minutes(10));
  Entry(Key('b'), 1000, minutes(5));
  BuildCache cache(dir_.string(), 10, absl::Minutes(30));
  EXPECT_EQ(cache.Prune().entries, 0);
  EXPECT_TRUE(Has(Key('a')));
  EXPECT_TRUE(Has(Key('b')));
}

TEST_F(BuildCacheTest, AHitMakesAnEntryRecent) {
  Entry(Key('a'), 1000, hours(3));
  Entry(Key('b'), 1000, hours(2));
  BuildCache::Touch(dir_ / Key('a'));
  BuildCache cache(dir_.string(), 1500, absl::Minutes(30));
  cache.Prune();
  EXPECT_TRUE(Has(Key('a')));
  EXPECT_FALSE(Has(Key('b')));
}

TEST_F(BuildCacheTest, BuildFoldersLeftByACrashGoEvenUnderTheBound) {
  Entry(".build-old", 1000, hours(2), /*finished=*/false);
  Entry(".build-now", 1000, minutes(1), /*finished=*/false);
  Entry(Key('d'), 1000, hours(5));
  BuildCache cache(dir_.string(), 0, absl::Minutes(30));  // unbounded
  EXPECT_EQ(cache.Prune().entries, 1);
  EXPECT_FALSE(Has(".build-old"));
  EXPECT_TRUE(Has(".build-now"));  // a build in progress
  EXPECT_TRUE(Has(Key('d')));
}

TEST_F(BuildCacheTest, AddedWalksOnlyWhenTheFolderMayBeOver) {
  Entry(Key('a'), 1000, hours(3));
  BuildCache cache(dir_.string(), 2500, absl::Minutes(30));
  EXPECT_EQ(cache.Added(0).entries, 0);  // the first call walks: 1002 bytes
  Entry(Key('b'), 1000, hours(2));
  EXPECT_EQ(cache.Added(1002).entries, 0);  // 2004: under, no walk
  EXPECT_TRUE(Has(Key('a')));
  Entry(Key('c'), 1000, minutes(0));
  EXPECT_EQ(cache.Added(1002).entries, 1);  // 3006: over, walks, a goes
  EXPECT_FALSE(Has(Key('a')));
  EXPECT_TRUE(Has(Key('c')));
}

// A cache folder given by mistake (a home, say) loses nothing but the
// compiler's own entries.
TEST_F(BuildCacheTest, OnlyTheCompilersOwnFoldersAreCountedOrRemoved) {
  Entry("Documents", 1000, hours(30));
  Entry("notes", 1000, hours(30), /*finished=*/false);
  Entry(Key('a'), 1000, hours(3));
  BuildCache cache(dir_.string(), 1, absl::Minutes(30));
  const BuildCache::Pruned pruned = cache.Prune();
  EXPECT_EQ(pruned.entries, 1);
  EXPECT_EQ(pruned.kept, 0u);
  EXPECT_TRUE(Has("Documents"));
  EXPECT_TRUE(Has("notes"));
  EXPECT_FALSE(Has(Key('a')));
}

}  // namespace
}  // namespace ptxbench::worker
