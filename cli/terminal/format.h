#ifndef PTXBENCH_CLI_TERMINAL_FORMAT_H_
#define PTXBENCH_CLI_TERMINAL_FORMAT_H_

// Text building blocks of the CLI's human output: progress bars, excerpts of
// long texts, times. Pure functions. Tables, money and speedups are in
// common/text_format.h (the reports use them too).

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxbench::cli {

// "[########------------]" with `width` cells between the brackets, filled
// in proportion to done/total (nothing filled when total is 0).
std::string ProgressBar(int64_t done, int64_t total, int width);

// "12/40 (30%)".
std::string Fraction(int64_t done, int64_t total);

// The first `max_lines` lines of `text` (each cut to `max_columns`), with a
// "... (N more lines)" line when anything was left out.
std::string Excerpt(absl::string_view text, int max_lines, int max_columns);

// Every non-empty line of `text` prefixed with `indent`; ends with a newline
// ("" for empty text).
std::string Indent(absl::string_view text, absl::string_view indent);

// `text` cut to `max` code points with a trailing "...", on one line.
std::string OneLine(absl::string_view text, size_t max);

// "2024-05-01 12:34:56" in local time; "-" for 0.
std::string FormatUnixMs(int64_t unix_ms);
// "5s ago", "3m ago", "2h ago", "4d ago"; "never" for 0.
std::string FormatAge(int64_t unix_ms, absl::Time now);
// " (cuBLAS)": what a reference time was measured on, for "reference%s";
// "" when the trace does not say (evaluations before it was recorded).
std::string ReferenceLabel(absl::string_view reference);

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_TERMINAL_FORMAT_H_
