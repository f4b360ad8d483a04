// Trace lines come from datasets users bring (traces/**/*.jsonl): parsing
// any bytes, and writing back what parsed, must neither crash nor grow
// without bound.
#include <cstddef>
#include <cstdint>
#include <string>

#include "workloads/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ptxbench::workloads::TraceRecord> t =
      ptxbench::workloads::ParseTraceLine(text, "fuzz");
  if (t.ok()) (void)ptxbench::workloads::FormatTraceLine(*t);
  return 0;
}
