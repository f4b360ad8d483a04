#ifndef PTXBENCH_WORKLOADS_JSON_UTIL_H_
#define PTXBENCH_WORKLOADS_JSON_UTIL_H_

// Strict JSON reading shared by the definition, prompt-registry and spec
// parsers, so all of them report problems in one shape:
//   <origin>: field "<field>": value <json value>: <problem>
//   <origin>: line L, column C: malformed JSON: <what>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::workloads {

// 1-based line and column.
struct TextPosition {
  int64_t line = 1;
  int64_t column = 1;
};

// The position of the character at 0-based `offset` in `text` (an offset past
// the end names the end of the text).
TextPosition PositionOf(absl::string_view text, size_t offset);

// INVALID_ARGUMENT "<origin>: field "<field>": value <value>: <problem>".
// `value` is already rendered as JSON (see ValueForError).
absl::Status FieldError(absl::string_view origin, absl::string_view field,
                        absl::string_view value, absl::string_view problem);

// A value rendered as compact JSON for an error message, cut to a readable
// length.
std::string ValueForError(const nlohmann::json& value);
std::string ValueForError(const nlohmann::ordered_json& value);

// Parses `text`: malformed JSON and duplicate object keys are
// INVALID_ARGUMENT with the origin and where it happened.
absl::StatusOr<nlohmann::json> ParseStrictJson(absl::string_view text,
                                               absl::string_view origin);
absl::StatusOr<nlohmann::ordered_json> ParseStrictOrderedJson(absl::string_view text,
                                                              absl::string_view origin);

// Field paths: Join("axes", "M") == "axes.M", Index("models", 2) == "models[2]".
std::string JoinField(absl::string_view parent, absl::string_view key);
std::string IndexField(absl::string_view parent, size_t index);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_JSON_UTIL_H_
