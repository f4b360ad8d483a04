#ifndef PTXBENCH_RESULTS_EXPORTS_TEXT_H_
#define PTXBENCH_RESULTS_EXPORTS_TEXT_H_

// The few text encodings the exports write by hand, on their hot paths
// (one call per field of a million rows): JSON strings, CSV fields, numbers
// and times. Model answers and logs may hold anything, so every string is
// written as valid UTF-8: an invalid byte becomes U+FFFD, and a reader
// (pandas, Python's json) never fails on a file we wrote.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxbench::exports {

// `text` as a JSON string, quotes included.
void AppendJsonString(std::string* out, absl::string_view text);

// `text` as one RFC 4180 field: quoted (quotes doubled) when it holds a
// comma, a quote, CR or LF; as is otherwise.
void AppendCsvField(std::string* out, absl::string_view text);

// A finite double in the shortest form that reads back as the same value
// ("0.1", "3", "1e-300"). The caller decides what a NaN or an infinity is.
void AppendDouble(std::string* out, double value);

// "2026-01-02T03:04:05.006Z" (RFC 3339, UTC, milliseconds).
std::string Rfc3339Millis(int64_t unix_ms);
// "2026-01-02T03:04:05Z".
std::string Rfc3339(absl::Time time);

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_TEXT_H_
