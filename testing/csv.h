#ifndef PTXBENCH_TESTING_CSV_H_
#define PTXBENCH_TESTING_CSV_H_

// Reads CSV back for the tests of the files ptxbench writes (report --output
// csv, export --format csv): RFC 4180 fields, split by a reader of its own
// so that a test does not check the writer with the writer's own rules.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::testing {

using CsvRow = std::vector<std::string>;

// How rows must end: the exports write CRLF (RFC 4180), the report LF.
enum class CsvLineEnd { kCrlf, kLf, kEither };

// The rows of `text`: fields split at commas; a quoted field may hold commas,
// doubled quotes and line breaks. Every row, the last included, ends with a
// line end of the kind asked for. kInvalidArgument, naming the row, for text
// that ends inside a quoted field or a row, a line end of another kind, or a
// quote inside an unquoted field.
absl::StatusOr<std::vector<CsvRow>> ParseCsv(absl::string_view text, CsvLineEnd line_end);

// The same for a test's checks: the rows, or none and a test failure (a
// non-fatal one, with ParseCsv's reason).
std::vector<CsvRow> CsvRows(absl::string_view text, CsvLineEnd line_end);

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_CSV_H_
