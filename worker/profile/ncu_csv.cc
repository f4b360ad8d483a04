#include "worker/profile/ncu_csv.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_replace.h"

namespace ptxbench::worker {
namespace {

// Durations in microseconds, sizes in bytes, from the unit ncu names.
double Scale(absl::string_view unit) {
  const std::string u = absl::AsciiStrToLower(unit);
  if (u == "ns" || u == "nsecond") return 1e-3;
  if (u == "ms" || u == "msecond") return 1e3;
  if (u == "s" || u == "second") return 1e6;
  if (absl::StartsWith(u, "kbyte")) return 1e3;
  if (absl::StartsWith(u, "kibyte")) return 1024;
  if (absl::StartsWith(u, "mbyte")) return 1e6;
  return 1;
}

}  // namespace

std::vector<std::vector<std::string>> ParseCsv(absl::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
      continue;
    }
    if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (any || !field.empty()) {
        row.push_back(std::move(field));
        rows.push_back(std::move(row));
      }
      row.clear();
      field.clear();
      any = false;
    } else {
      field.push_back(c);
      any = true;
    }
  }
  if (any || !field.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<double> NcuValue(absl::string_view value, absl::string_view unit) {
  const std::string v = absl::StrReplaceAll(absl::StripAsciiWhitespace(value), {{",", ""}});
  double d = 0;
  if (!absl::SimpleAtod(v, &d) || !std::isfinite(d)) return std::nullopt;
  d *= Scale(unit);
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<double> NcuRow::Number(const std::string& column) const {
  auto it = columns_.find(column);
  if (it == columns_.end() || it->second >= cells_.size()) return std::nullopt;
  return NcuValue(cells_[it->second], it->second < units_.size() ? units_[it->second] : "");
}

std::string NcuRow::Text(const std::string& column) const {
  auto it = columns_.find(column);
  return it == columns_.end() || it->second >= cells_.size() ? "" : cells_[it->second];
}

}  // namespace ptxbench::worker
