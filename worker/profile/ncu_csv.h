#ifndef PTXBENCH_WORKER_PROFILE_NCU_CSV_H_
#define PTXBENCH_WORKER_PROFILE_NCU_CSV_H_

// Nsight Compute's raw CSV page as text (`ncu --import R --csv --page raw
// --print-units base`): a header row of column names, a row of units, then
// one row per profiled launch. Written by a process the kernel ran in, so
// read as hostile input: a total parser (fuzz/ncu_csv_fuzz.cc), numbers
// only when finite, no exception, no limit but the input's size. Needs only
// Abseil (the fuzz build compiles it alone).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench::worker {

// Every record of `text`; quoted fields may hold commas, doubled quotes and
// line breaks; blank lines are skipped.
std::vector<std::vector<std::string>> ParseCsv(absl::string_view text);

// A value as ncu prints it ("1,980,000", "45.94", "n/a", "") scaled from
// `unit` (ns, us, ms, s; byte, Kbyte, KiB, Mbyte) to microseconds or bytes;
// nullopt when it is not a finite number.
std::optional<double> NcuValue(absl::string_view value, absl::string_view unit);

// One launch's row, read by column name.
class NcuRow {
 public:
  NcuRow(const std::map<std::string, size_t>& columns, const std::vector<std::string>& units,
         const std::vector<std::string>& cells)
      : columns_(columns), units_(units), cells_(cells) {}
  std::optional<double> Number(const std::string& column) const;
  std::string Text(const std::string& column) const;  // "" when absent

 private:
  const std::map<std::string, size_t>& columns_;
  const std::vector<std::string>& units_;
  const std::vector<std::string>& cells_;
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_PROFILE_NCU_CSV_H_
