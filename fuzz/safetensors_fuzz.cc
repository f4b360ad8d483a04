// Safetensors headers come from datasets: parsing any bytes must neither
// crash nor read outside them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "workloads/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)ptxbench::workloads::ParseSafetensorsHeader(bytes, "fuzz");
  return 0;
}
