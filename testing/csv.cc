#include "testing/csv.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ptxbench::testing {

absl::StatusOr<std::vector<CsvRow>> ParseCsv(absl::string_view text, CsvLineEnd line_end) {
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  bool quoted = false;      // inside a quoted field
  bool was_quoted = false;  // the field being read was quoted
  auto fail = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("CSV row ", rows.size() + 1, ": ", why));
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      if (!field.empty() || was_quoted) return fail("a quote inside an unquoted field");
      quoted = was_quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\r' || c == '\n') {
      const bool crlf = c == '\r' && i + 1 < text.size() && text[i + 1] == '\n';
      if (c == '\r' && !crlf) return fail("a CR without LF outside quotes");
      if ((crlf && line_end == CsvLineEnd::kLf) || (!crlf && line_end == CsvLineEnd::kCrlf)) {
        return fail(crlf ? "ends in CRLF, not LF" : "ends in LF, not CRLF");
      }
      if (crlf) ++i;
      row.push_back(std::move(field));
      field.clear();
      was_quoted = false;
      rows.push_back(std::move(row));
      row.clear();
    } else {
      if (was_quoted) return fail("text after a closing quote");
      field += c;
    }
  }
  if (quoted) return fail("the text ends inside a quoted field");
  if (!field.empty() || was_quoted || !row.empty()) return fail("the text ends inside a row");
  return rows;
}

std::vector<CsvRow> CsvRows(absl::string_view text, CsvLineEnd line_end) {
  absl::StatusOr<std::vector<CsvRow>> rows = ParseCsv(text, line_end);
  if (!rows.ok()) {
    ADD_FAILURE() << rows.status();
    return {};
  }
  return *std::move(rows);
}

}  // namespace ptxbench::testing
