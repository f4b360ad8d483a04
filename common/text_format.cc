#include "common/text_format.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ptxbench {

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)), right_(headers_.size(), false) {}

void Table::AlignRight(size_t column) {
  if (column < right_.size()) right_[column] = true;
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<size_t> width(headers_.size(), 0);
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = DisplayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], DisplayWidth(row[c]));
  }
  std::string out;
  auto append_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - DisplayWidth(row[c]), ' ');
      if (c > 0) line += "  ";
      if (right_[c]) {
        absl::StrAppend(&line, pad, row[c]);
      } else {
        absl::StrAppend(&line, row[c], pad);
      }
    }
    line.erase(line.find_last_not_of(' ') + 1);
    absl::StrAppend(&out, line, "\n");
  };
  append_row(headers_);
  for (const auto& row : rows_) append_row(row);
  return out;
}

size_t DisplayWidth(absl::string_view text) {
  size_t n = 0;
  for (unsigned char ch : text) {
    if ((ch & 0xC0) != 0x80) ++n;  // not a continuation byte
  }
  return n;
}

std::string FormatCost(double usd) {
  if (usd > 0 && usd < 0.01) return absl::StrFormat("$%.4f", usd);
  return absl::StrFormat("$%.2f", usd);
}

std::string FormatSpeedup(double speedup) {
  if (speedup <= 0) return "-";
  return absl::StrFormat("%.2fx", speedup);
}

}  // namespace ptxbench
