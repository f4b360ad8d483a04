// The module scan (gpu_image_scan.h) and what library_check.h makes of it,
// on modules made in memory (testing/elf_builder.h): every image is read
// whatever hides it, an image that cannot be read refuses the module, and
// the work stays within a bound linear in the bytes.
#include "worker/compile/gpu_image_scan.h"

#include <chrono>
#include <cstring>
#include <iostream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/compile/library_check.h"
#include "worker/compile/testing/elf_builder.h"
#include "worker/compile/vendor_code_table.h"

namespace ptxbench::worker {
namespace {

using ::testing::HasSubstr;
using testing::MakeCubin;
using testing::MakeFatbin;
using testing::MakeHostModule;
using testing::Packing;

// Machine code that is not all one byte (a compressor has work to do).
std::string Code(size_t size, char seed) {
  std::string code(size, '\0');
  for (size_t i = 0; i < size; i += 16) code[i] = static_cast<char>(seed + i / 16);
  return code;
}

const std::string& VendorNamedCubin() {
  static const std::string* cubin =
      new std::string(MakeCubin("nvjet_sm90_tst_256x128_64x4_h_bz_TNT", Code(512, 3)));
  return *cubin;
}

// Visits nothing; counts what the scan found.
class Counter final : public ImageVisitor {
 public:
  absl::StatusOr<bool> OnElf(const ElfView&, const ImageSite&) override { return false; }
  absl::StatusOr<bool> OnPtx(absl::string_view, const ImageSite&) override { return false; }
};

// 300 copies of the ELF magic in front of an image were once 300 images
// looked at, past the 256 the old scan stopped at.
TEST(GpuImageScanTest, MagicPaddingDoesNotHideWhatFollows) {
  std::string module = MakeHostModule();
  for (int i = 0; i < 300; ++i) module += "\x7f" "ELF";
  module += VendorNamedCubin();
  absl::StatusOr<LibraryUse> use = DetectLibraryInElfData(module);
  ASSERT_TRUE(use.ok()) << use.status();
  EXPECT_EQ(use->library, "cuBLASLt");
  EXPECT_THAT(use->evidence, HasSubstr("nvjet_sm90"));
}

// A hit is the magic then a class and a data byte: padding of those is 300
// images that must each be read, and the first that is not refuses.
TEST(GpuImageScanTest, PaddingOfHitsRefusesTheModule) {
  std::string module = MakeHostModule();
  const size_t first = module.size();
  for (int i = 0; i < 300; ++i) module += std::string("\x7f" "ELF\x02\x01", 6);
  module += VendorNamedCubin();
  absl::StatusOr<LibraryUse> use = DetectLibraryInElfData(module);
  EXPECT_EQ(use.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(use.status().message()),
              HasSubstr(absl::StrCat("an embedded image ptxbench cannot read at byte ", first)));
}

// A cubin in a fatbin, plain or compressed as nvcc compresses (zstd, LZ4),
// at an odd offset: its kernel's name is read.
TEST(GpuImageScanTest, CubinsInFatbinsAreReadCompressedOrNot) {
  for (Packing packing : {Packing::kPlain, Packing::kZstd, Packing::kLz4}) {
    const std::string module = MakeHostModule() + "abc" + MakeFatbin(VendorNamedCubin(), packing);
    absl::StatusOr<LibraryUse> use = DetectLibraryInElfData(module);
    ASSERT_TRUE(use.ok()) << use.status();
    EXPECT_EQ(use->library, "cuBLASLt") << static_cast<int>(packing);
    if (packing != Packing::kPlain) {
      EXPECT_THAT(use->evidence, HasSubstr("the entry compressed at byte"));
    }
  }
}

TEST(GpuImageScanTest, PtxEntriesAreReadForKernelNames) {
  const std::string ptx =
      ".version 9.0\n.target sm_90\n.visible .entry xmma_gemm_f16f16_f32(\n.param .u64 a\n)\n{\nret;\n}\n";
  for (Packing packing : {Packing::kPlain, Packing::kZstd, Packing::kLz4}) {
    absl::StatusOr<LibraryUse> use =
        DetectLibraryInElfData(MakeHostModule() + MakeFatbin(ptx, packing, /*kind=*/1));
    ASSERT_TRUE(use.ok()) << use.status();
    EXPECT_EQ(use->library, "cuBLAS");
    EXPECT_THAT(use->evidence, HasSubstr("in PTX"));
  }
  EXPECT_THAT(PtxEntryNames(ptx + ".entry   k2 (\n .entry\n"),
              ::testing::ElementsAre("xmma_gemm_f16f16_f32", "k2"));
}

// A vendor kernel renamed is found by its code, when a table holds it; a
// kernel below the hashed size is anyone's.
TEST(GpuImageScanTest, RenamedVendorCodeIsFoundByItsHash) {
  const std::string code = Code(1024, 9);
  std::unique_ptr<VendorCodeTable> table =
      VendorCodeTable::FromHashes("cuBLAS", {KernelSectionHash(code)});
  const std::string module =
      MakeHostModule() + "x" + MakeFatbin(MakeCubin("my_own_gemm", code), Packing::kZstd);
  absl::StatusOr<LibraryUse> use = DetectLibraryInElfData(module, table.get());
  ASSERT_TRUE(use.ok()) << use.status();
  EXPECT_EQ(use->library, "cuBLAS");
  EXPECT_THAT(use->evidence, HasSubstr("the code of a cuBLAS kernel, in section .text.my_own_gemm"));
  // Without the table, or a different kernel: nothing.
  EXPECT_FALSE(DetectLibraryInElfData(module)->found());
  const std::string other = MakeHostModule() + MakeFatbin(MakeCubin("my_own_gemm", Code(1024, 10)),
                                                          Packing::kZstd);
  EXPECT_FALSE(DetectLibraryInElfData(other, table.get())->found());
  const std::string tiny = Code(kMinHashedSection - 16, 9);
  table = VendorCodeTable::FromHashes("cuBLAS", {KernelSectionHash(tiny)});
  EXPECT_FALSE(
      DetectLibraryInElfData(MakeHostModule() + MakeCubin("fill", tiny), table.get())->found());
}

// Every image that cannot be read refuses the module, saying where.
TEST(GpuImageScanTest, UnreadableImagesRefuseTheModule) {
  const std::string host = MakeHostModule();
  const std::string cubin = VendorNamedCubin();
  std::string zstd = MakeFatbin(cubin, Packing::kZstd);
  uint32_t compressed = 0;  // cut short: the frame ends early
  std::memcpy(&compressed, zstd.data() + 16 + 16, 4);
  compressed -= 10;
  std::memcpy(zstd.data() + 16 + 16, &compressed, 4);
  std::string lz4 = MakeFatbin(cubin, Packing::kLz4);
  lz4[16 + 64 + 1] = '\xff';  // a length run past the declared size
  std::string kind = MakeFatbin(cubin, Packing::kPlain);
  kind[16] = 8;  // LTO IR: not read
  std::string oversized = MakeFatbin(cubin, Packing::kZstd);
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(oversized.data() + 16 + 56, &huge, 8);
  const struct {
    const char* what;
    std::string module;
    absl::StatusCode code;
    size_t at;  // the image's byte, or its fatbin entry's
  } kCases[] = {
      {"truncated cubin", host + cubin.substr(0, cubin.size() / 2),
       absl::StatusCode::kInvalidArgument, host.size()},
      {"truncated fatbin", host + MakeFatbin(cubin, Packing::kPlain).substr(0, 200),
       absl::StatusCode::kInvalidArgument, host.size()},
      {"corrupt zstd", host + zstd, absl::StatusCode::kInvalidArgument, host.size() + 16},
      {"corrupt lz4", host + lz4, absl::StatusCode::kInvalidArgument, host.size() + 16},
      {"unknown kind", host + kind, absl::StatusCode::kInvalidArgument, host.size() + 16},
      {"big-endian ELF", host + std::string("\x7f" "ELF\x02\x02\x01", 7) + std::string(64, '\0'),
       absl::StatusCode::kInvalidArgument, host.size()},
      {"over the decompression bound", host + oversized, absl::StatusCode::kResourceExhausted,
       host.size() + 16},
  };
  for (const auto& c : kCases) {
    absl::StatusOr<LibraryUse> use = DetectLibraryInElfData(c.module);
    EXPECT_EQ(use.status().code(), c.code) << c.what << ": " << use.status();
    EXPECT_THAT(std::string(use.status().message()), HasSubstr(absl::StrCat("byte ", c.at)))
        << c.what;
  }
  // The module itself: not an ELF at all.
  EXPECT_EQ(DetectLibraryInElfData("plain text").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Thousands of ELF headers, each with its own section headers, all naming
// one big symbol table: each is sound, together they would cost the table
// once per header. The budget refuses the module instead.
std::string OverlappingHeaders(int headers, size_t symbols) {
  std::string module = MakeHostModule();
  const size_t per = sizeof(Elf64_Ehdr) + 4 * sizeof(Elf64_Shdr);
  const size_t tables = module.size() + headers * per;  // the shared tables start here
  const std::string strtab("\0name\0", 6);
  for (int i = 0; i < headers; ++i) {
    const size_t base = module.size();
    const Elf64_Ehdr eh = testing::ElfHeader(EM_CUDA, sizeof(Elf64_Ehdr), 4, 1);
    Elf64_Shdr sh[4]{};
    sh[1].sh_type = SHT_STRTAB;
    sh[1].sh_offset = tables - base;
    sh[1].sh_size = strtab.size();
    sh[2] = sh[1];
    sh[3].sh_type = SHT_SYMTAB;
    sh[3].sh_offset = tables + strtab.size() + 2 - base;
    sh[3].sh_size = symbols * sizeof(Elf64_Sym);
    sh[3].sh_link = 2;
    sh[3].sh_entsize = sizeof(Elf64_Sym);
    module.append(reinterpret_cast<const char*>(&eh), sizeof(eh));
    module.append(reinterpret_cast<const char*>(sh), sizeof(sh));
  }
  module += strtab + std::string(2, '\0');
  Elf64_Sym sym{};
  sym.st_name = 1;
  for (size_t i = 0; i < symbols; ++i) module.append(reinterpret_cast<const char*>(&sym), sizeof(sym));
  return module;
}

TEST(GpuImageScanTest, OverlappingImagesSpendTheBudgetAndAreRefused) {
  const std::string module = OverlappingHeaders(4000, 40000);  // 1.3 MiB, one table of 0.9 MiB
  absl::StatusOr<LibraryUse> use = DetectLibraryInElfData(module);
  EXPECT_EQ(use.status().code(), absl::StatusCode::kResourceExhausted) << use.status();
  EXPECT_THAT(std::string(use.status().message()), HasSubstr("more reading than ptxbench allows"));
  // Few headers are read whole: no refusal.
  EXPECT_TRUE(DetectLibraryInElfData(OverlappingHeaders(3, 40000)).ok());
}

// The worst a 32 MiB module can do to the scan: every hit a sound image,
// back to back, and each compressed. Every one is read (none skipped), and
// the work counted stays within the bound of its bytes.
TEST(GpuImageScanTest, A32MiBModuleOfImagesIsReadWholeInLinearWork) {
  const std::string fatbin = MakeFatbin(MakeCubin("k", Code(512, 1)), Packing::kLz4);
  std::string module = MakeHostModule();
  int images = 0;
  while (module.size() + fatbin.size() <= (uint64_t{32} << 20)) {
    module += fatbin;
    ++images;
  }
  Counter counter;
  ScanStats stats;
  ScanLimits limits;
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = ScanGpuImages(module, limits, &counter, &stats);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << images << " fatbins in " << (module.size() >> 20) << " MiB: " << stats.work
            << " units of work, " << stats.decompressed_bytes << " bytes decompressed, "
            << seconds << " s\n";
  // Past 256 MiB decompressed it would be refused, never passed.
  if (static_cast<uint64_t>(images) * MakeCubin("k", Code(512, 1)).size() > limits.max_decompressed_bytes) {
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  } else {
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(stats.elf_images, images + 1);
  }
  EXPECT_LE(stats.work, limits.work_slack + limits.work_per_byte *
                                                (module.size() + stats.decompressed_bytes));
  // Plain: no decompression; every image read, the work about 2x the bytes.
  const std::string plain = MakeFatbin(MakeCubin("k", Code(512, 1)), Packing::kPlain);
  module = MakeHostModule();
  images = 0;
  while (module.size() + plain.size() <= (uint64_t{32} << 20)) {
    module += plain;
    ++images;
  }
  s = ScanGpuImages(module, limits, &counter, &stats);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(stats.elf_images, images + 1);
  EXPECT_EQ(stats.fatbin_entries, images);
  EXPECT_LE(stats.work, 3 * module.size());
}

TEST(GpuImageScanTest, Lz4BlocksDecodeExactlyOrNotAtAll) {
  // "ab" then a match of offset 2, 10 bytes: overlapping copy.
  const std::string block = std::string("\x26" "ab\x02\x00", 5);
  EXPECT_EQ(DecompressLz4Block(block, 12).value_or(""), "abababababab");
  EXPECT_FALSE(DecompressLz4Block(block, 11).ok());             // past the size declared
  EXPECT_FALSE(DecompressLz4Block(block, 13).ok());             // short of it
  EXPECT_FALSE(DecompressLz4Block(std::string("\x26" "ab\x05\x00", 5), 12).ok());  // before start
  EXPECT_FALSE(DecompressLz4Block(std::string("\xf0", 1), 100).ok());  // ends in a length
  const std::string data = std::string(1000, 'z') + "tail" + std::string(300, '\0');
  EXPECT_EQ(DecompressLz4Block(testing::Lz4Compress(data), data.size()).value_or(""), data);
}

}  // namespace
}  // namespace ptxbench::worker
