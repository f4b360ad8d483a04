// The vendor-library scans read submitted source, the linker's log of it and
// the library built from it (worker/compile/gpu_image_scan.h: every embedded
// ELF and fatbin, compressed or not). The first byte picks how the rest is
// given to the module scan, so the fuzzer reaches past the outer ELF header:
// as it is, behind a sound host module, as a fatbin entry (plain, zstd, LZ4)
// behind one, or to the LZ4 decoder alone.
#include <cstddef>
#include <cstdint>
#include <string>

#include "worker/compile/gpu_image_scan.h"
#include "worker/compile/library_check.h"
#include "worker/compile/testing/elf_builder.h"
#include "worker/compile/vendor_code_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace w = ptxbench::worker;
  if (size == 0) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  static const auto* table = w::VendorCodeTable::FromHashes("cuBLAS", {1, 2, 3}).release();
  switch (data[0] % 6) {
    case 0:
      (void)w::DetectLibraryInSource(bytes);
      (void)w::DetectLibraryInLinkLog(bytes);
      (void)w::DetectLibraryInElfData(bytes, table);
      break;
    case 1:
      (void)w::DetectLibraryInElfData(w::testing::MakeHostModule() + bytes, table);
      break;
    case 2:
    case 3:
    case 4: {
      const auto packing = static_cast<w::testing::Packing>(data[0] % 6 - 2);
      const uint16_t kind = data[0] & 0x80 ? 1 : 2;
      (void)w::DetectLibraryInElfData(
          w::testing::MakeHostModule() + w::testing::MakeFatbin(bytes, packing, kind), table);
      break;
    }
    case 5:
      (void)w::DecompressLz4Block(bytes, size * 4);
      break;
  }
  return 0;
}
