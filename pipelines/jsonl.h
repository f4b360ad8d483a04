#ifndef PTXBENCH_PIPELINES_JSONL_H_
#define PTXBENCH_PIPELINES_JSONL_H_

// Private to pipelines/: reading back the .jsonl files stages write.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace ptxbench::pipelines::internal {

// Each non-empty line of `text` through `read` (which may throw nlohmann's
// exceptions on a missing or mistyped field); INVALID_ARGUMENT
// "<file>: line N is not <what>" for the first line that is not one.
template <typename T, typename Read>
absl::StatusOr<std::vector<T>> ReadJsonl(absl::string_view text, absl::string_view file,
                                         absl::string_view what, Read read) {
  std::vector<T> out;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++line_number;
    try {
      out.push_back(read(nlohmann::json::parse(line)));
    } catch (const nlohmann::json::exception&) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": line ", line_number, " is not ", what));
    }
  }
  return out;
}

}  // namespace ptxbench::pipelines::internal

#endif  // PTXBENCH_PIPELINES_JSONL_H_
