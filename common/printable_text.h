#ifndef PTXBENCH_COMMON_PRINTABLE_TEXT_H_
#define PTXBENCH_COMMON_PRINTABLE_TEXT_H_

// How text a kernel controls (its kernel names, what it printed, a tool's
// error about it) is shown in a terminal or to a model: printable ASCII
// only. Here rather than in results/eval_text.h so that the worker, which
// writes such text into its results, needs nothing of results/.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace ptxbench {

// `text` cut to `max_bytes`, with every byte outside printable ASCII
// (control characters, escape sequences, invalid or any UTF-8) as '?'.
std::string PrintableText(absl::string_view text, size_t max_bytes);

// As PrintableText, but newlines and tabs stay: for text read as lines
// (what a candidate host printed, a host's reply to the harness).
std::string PrintableLines(absl::string_view text, size_t max_bytes);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_PRINTABLE_TEXT_H_
