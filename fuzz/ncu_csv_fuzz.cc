// The worker reads a profile's raw CSV page (worker/profile/ncu_csv.h),
// which the profiler wrote inside the candidate's sandbox: the kernel may
// have replaced it with anything.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "worker/profile/ncu_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto rows = ptxbench::worker::ParseCsv(bytes);
  if (rows.empty()) return 0;
  std::map<std::string, size_t> columns;
  for (size_t i = 0; i < rows[0].size(); ++i) columns.emplace(rows[0][i], i);
  const std::vector<std::string> none;
  const auto& units = rows.size() > 1 ? rows[1] : none;
  for (size_t r = 1; r < rows.size(); ++r) {
    const ptxbench::worker::NcuRow row(columns, units, rows[r]);
    for (const auto& [name, index] : columns) {
      // Every number read is finite; text is what the cell held.
      if (auto v = row.Number(name); v && !std::isfinite(*v)) __builtin_trap();
      (void)row.Text(name);
    }
  }
  return 0;
}
