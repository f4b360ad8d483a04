// The vendor code table (vendor_code_table.h): made from libraries, kept on
// disk under a key of their paths, sizes and mtimes, and a real cuBLAS
// kernel renamed into a cubin of its own found by its code.
#include "worker/compile/vendor_code_table.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <utime.h>

#include <filesystem>
#include <fstream>

#include "common/file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/compile/library_check.h"
#include "worker/compile/testing/elf_builder.h"

namespace ptxbench::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::MakeCubin;
using testing::MakeFatbin;
using testing::MakeHostModule;
using testing::Packing;

std::string TempDir() {
  std::string dir = (fs::temp_directory_path() / "vendor_code_table_test-XXXXXX").string();
  EXPECT_NE(mkdtemp(dir.data()), nullptr);
  return dir;
}

TEST(VendorCodeTableTest, ItsFileReadsBackAndACorruptOneIsRefused) {
  auto table = VendorCodeTable::FromHashes("cuDNN", {7, 3, 3, 11});
  EXPECT_EQ(table->size(), 3u);
  auto back = VendorCodeTable::Deserialize(table->Serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->Find(11), "cuDNN");
  EXPECT_EQ((*back)->Find(12), "");
  EXPECT_EQ((*back)->identity(), table->identity());
  std::string cut = table->Serialize();
  cut.pop_back();
  EXPECT_EQ(VendorCodeTable::Deserialize(cut).status().code(), absl::StatusCode::kDataLoss);
}

// A stand-in vendor library: a host module carrying one cubin of `code`.
TEST(VendorCodeTableTest, IsBuiltOnceAndAgainWhenALibraryChanges) {
  const std::string dir = TempDir();
  const std::string code(512, '\x42');
  const std::string library = dir + "/libcublasLt.so.13";
  ASSERT_TRUE(WriteFile(library, MakeHostModule() +
                                     MakeFatbin(MakeCubin("nvjet_x", code), Packing::kZstd))
                  .ok());
  ASSERT_TRUE(WriteFile(dir + "/libcuda.so.1", MakeHostModule()).ok());  // not a vendor's
  std::vector<VendorLibrary> found = VendorCodeTable::FindLibraries({dir, dir + "/missing"});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].name, "cuBLASLt");
  const std::string cache = dir + "/cache";
  auto table = VendorCodeTable::LoadOrBuild(found, cache);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ((*table)->Find(KernelSectionHash(code)), "cuBLASLt");
  ASSERT_EQ(std::distance(fs::directory_iterator(cache), fs::directory_iterator()), 1);
  // Read back from the kept file: the library, now no ELF at all (same
  // size and mtime), is not read again.
  const std::string identity = (*table)->identity();
  struct stat st;
  ASSERT_EQ(stat(library.c_str(), &st), 0);
  ASSERT_TRUE(WriteFile(library, std::string(st.st_size, 'x')).ok());
  const struct timespec same[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, library.c_str(), same, 0), 0);
  auto again = VendorCodeTable::LoadOrBuild(found, cache);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->identity(), identity);
  EXPECT_EQ((*again)->size(), 1u);
  // A library of another mtime is another key: built again, kept beside.
  ASSERT_TRUE(WriteFile(library, MakeHostModule() +
                                     MakeFatbin(MakeCubin("nvjet_x", code), Packing::kZstd))
                  .ok());
  struct utimbuf times{1000000, 1000000};
  ASSERT_EQ(utime(library.c_str(), &times), 0);
  auto changed = VendorCodeTable::LoadOrBuild(found, cache);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_NE((*changed)->identity(), identity);
  EXPECT_EQ(std::distance(fs::directory_iterator(cache), fs::directory_iterator()), 2);
  fs::remove_all(dir);
}

// A kept table that another user could have written (an empty one passes
// every vendor kernel) is not read: the table is built again.
TEST(VendorCodeTableTest, AKeptTableOthersCouldWriteIsNotRead) {
  const std::string dir = TempDir();
  const std::string code(512, '\x42');
  ASSERT_TRUE(WriteFile(dir + "/libcublas.so.13",
                        MakeHostModule() + MakeFatbin(MakeCubin("k", code), Packing::kZstd))
                  .ok());
  const std::vector<VendorLibrary> found = VendorCodeTable::FindLibraries({dir});
  ASSERT_EQ(found.size(), 1u);
  const std::string cache = dir + "/cache";
  ASSERT_TRUE(VendorCodeTable::LoadOrBuild(found, cache).ok());
  EXPECT_EQ(fs::status(cache).permissions() & fs::perms::all, fs::perms::owner_all);
  const std::string kept = fs::directory_iterator(cache)->path().string();
  // The kept file forged: the same identity, its one hash changed (the last
  // entry is 8 bytes of hash and 4 of library index).
  std::string forged = ReadFile(kept).value();
  forged[forged.size() - 12] ^= '\xff';
  ASSERT_TRUE(WriteFile(kept, forged).ok());
  chmod(kept.c_str(), 0600);
  // Written by this user, it is read (the forgery would work): the control.
  auto mine = VendorCodeTable::LoadOrBuild(found, cache);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ((*mine)->Find(KernelSectionHash(code)), "");
  // Writable by others, it is not read: the table is built again.
  chmod(kept.c_str(), 0666);
  auto again = VendorCodeTable::LoadOrBuild(found, cache);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->Find(KernelSectionHash(code)), "cuBLAS") << "the forged table was read";
  fs::remove_all(dir);
}

// Finds the first kernel section of a library's cubins.
class FirstKernel final : public ImageVisitor {
 public:
  absl::StatusOr<bool> OnElf(const ElfView& elf, const ImageSite&) override {
    return ForEachKernelSection(elf, [&](absl::string_view, absl::string_view code) {
      if (code.size() < 4096) return false;
      code_ = std::string(code);
      return true;
    });
  }
  absl::StatusOr<bool> OnPtx(absl::string_view, const ImageSite&) override { return false; }
  std::string code_;
};

// One of cuBLAS's own kernels, its code copied into a cubin whose kernel has
// an innocent name, carried zstd-compressed: found by what it is.
TEST(VendorCodeTableTest, ARealCublasKernelRenamedIsFoundByItsCode) {
  const char* kCublas = "/usr/local/cuda/lib64/libcublas.so";
  if (!fs::exists(kCublas)) GTEST_SKIP() << "needs " << kCublas;
  const std::string path = fs::canonical(kCublas).string();
  auto bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  FirstKernel first;
  ScanLimits limits;
  limits.max_decompressed_bytes = uint64_t{1} << 40;
  limits.skip_unreadable = true;
  ASSERT_TRUE(ScanGpuImages(*bytes, limits, &first).ok());
  ASSERT_FALSE(first.code_.empty()) << "no kernel of 4 KiB or more in " << path;
  auto table = VendorCodeTable::Build({{path, "cuBLAS"}});
  ASSERT_TRUE(table.ok()) << table.status();
  const std::string module =
      MakeHostModule() + "xy" + MakeFatbin(MakeCubin("my_gemm_kernel", first.code_), Packing::kZstd);
  absl::StatusOr<LibraryUse> use = DetectLibraryInElfData(module, table->get());
  ASSERT_TRUE(use.ok()) << use.status();
  EXPECT_EQ(use->library, "cuBLAS");
  EXPECT_THAT(use->evidence, HasSubstr("the code of a cuBLAS kernel, in section .text.my_gemm_kernel"));
  EXPECT_FALSE(DetectLibraryInElfData(module)->found());  // its name says nothing
}

}  // namespace
}  // namespace ptxbench::worker
