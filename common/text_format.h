#ifndef PTXBENCH_COMMON_TEXT_FORMAT_H_
#define PTXBENCH_COMMON_TEXT_FORMAT_H_

// Text building blocks shared by the CLI's views (cli/) and the reports'
// renderings (report/): aligned tables, display widths, money and speedups.
// Pure functions.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench {

// A plain-text table: a header row, then rows; columns separated by two
// spaces, padded to the widest cell (counted in UTF-8 code points), no
// trailing blanks. Numeric columns can be right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> headers);

  void AlignRight(size_t column);
  // Missing cells are blank; extra cells are dropped.
  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }

  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// Number of code points of UTF-8 text (what a terminal shows, near enough).
size_t DisplayWidth(absl::string_view text);

// "$1.23" (4 decimals under a cent, so small costs do not read as zero).
std::string FormatCost(double usd);
// "1.23x"; "-" for 0.
std::string FormatSpeedup(double speedup);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_TEXT_FORMAT_H_
