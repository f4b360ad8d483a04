// The vendor-library scans read submitted source, the linker's log of it and
// the library built from it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "worker/compile/library_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)ptxbench::worker::DetectLibraryInSource(bytes);
  (void)ptxbench::worker::DetectLibraryInLinkLog(bytes);
  (void)ptxbench::worker::DetectLibraryInElfData(bytes);
  return 0;
}
