#ifndef PTXBENCH_COMMON_JSON_READER_H_
#define PTXBENCH_COMMON_JSON_READER_H_

// Strict JSON: the one way ptxbench reads the JSON files it is given
// (definitions, workload lines, solutions, safetensors headers, experiment
// specs, the model registry, the prompt registry and prompt hubs), so that
// every one of them refuses the same things and reports them in one shape
// (docs/FORMATS.md, "Strict JSON errors"). Every error is INVALID_ARGUMENT:
//
//   <file>: <path>: expected <what>, found <value>[; <why>]
//
//   <file>   the origin the reader was given (a path, "<stdin>", "w.jsonl:3")
//   <path>   where in the document, as a JSON path from its root `$`:
//            $, $.samples, $.models[2], $[0].test_path, $.axes.M.type; a key
//            that is not a plain name ([A-Za-z_][A-Za-z0-9_-]*) is quoted:
//            $.models["gpt-4.1"]
//   <what>   what would have been accepted there
//   <value>  the value found, as compact JSON cut after 80 characters; or
//            words where no one value is wrong: `nothing` for an absent
//            required key, `an unknown key` for a key the format lacks
//   <why>    when the expectation alone does not say what is wrong
//
// Text that is not JSON at all has no path yet; it is named by position:
//
//   <file>: line L, column C: malformed JSON: <what the parser saw>
//
// Strict means: a key repeated within one object is refused (JSON leaves it
// open; parsers keep either copy), and each reader refuses keys it does not
// know where its format says so (CheckKeys).

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench {

// Insertion-ordered: definitions keep their axes and tensors in file order
// (the order of run()'s arguments), and errors name the first bad key of
// the file, not of the alphabet.
using StrictJson = nlohmann::ordered_json;

// Parses `text`: malformed JSON and a key repeated in one object are
// INVALID_ARGUMENT naming `origin` and where it happened.
absl::StatusOr<StrictJson> ParseStrictJson(absl::string_view text, absl::string_view origin);

// OK when `text` nests arrays and objects at most `max_depth` deep, read by
// a linear scan that skips strings, before any parser sees it:
// INVALID_ARGUMENT naming `origin` otherwise. For hostile documents: the
// parser is iterative, but what later walks or writes the value (dump())
// recurses once per level, and a 2 MB body nested a million deep overflowed
// the gateway's stack that way. Malformed text passes here and is the
// parser's to refuse.
absl::Status CheckJsonDepth(absl::string_view text, int max_depth, absl::string_view origin);

// Paths inside a document, from its root (""): JsonField("axes", "M") ==
// "axes.M", JsonIndex("models", 2) == "models[2]". Errors print them from
// `$` (JsonPath).
std::string JsonField(absl::string_view parent, absl::string_view key);
std::string JsonIndex(absl::string_view parent, size_t index);
// "$" followed by `path`: "$.axes.M", "$[0]", "$".
std::string JsonPath(absl::string_view path);

// A value as an error shows it: compact JSON, cut to a readable length.
std::string JsonForError(const StrictJson& value);

// Typed reads of one document's values, each problem reported in the shape
// above against the document's origin. Paths are written from the root
// ("models[2].max_turns", "" for the document itself). Cheap to copy;
// holds no reference to the document.
class JsonReader {
 public:
  using Json = StrictJson;

  explicit JsonReader(absl::string_view origin) : origin_(origin) {}
  const std::string& origin() const { return origin_; }

  // "<origin>: <path>: expected <expected>, found <value>[; <why>]".
  absl::Status Error(absl::string_view path, const Json& found, absl::string_view expected,
                     absl::string_view why = "") const;
  // The same, with the found value already written (a value not read from a
  // document, or "nothing").
  absl::Status ErrorFound(absl::string_view path, absl::string_view found,
                          absl::string_view expected, absl::string_view why = "") const;
  // A required key that is absent: "expected <expected>, found nothing".
  absl::Status Missing(absl::string_view path, absl::string_view expected) const;

  // The member `key` of `object`, or nullptr when absent.
  static const Json* Member(const Json& object, absl::string_view key);
  // The member `key` of `object` (at `parent`); Missing when absent.
  absl::StatusOr<const Json*> Required(const Json& object, absl::string_view parent,
                                       absl::string_view key) const;
  // Every key of `object` (at `parent`) is one of `known`, or starts with
  // '_' where `allow_comments` (a format's comment keys).
  absl::Status CheckKeys(const Json& object, absl::string_view parent,
                         const std::vector<std::string>& known, bool allow_comments) const;

  absl::Status RequireObject(const Json& value, absl::string_view path) const;
  absl::StatusOr<std::string> String(const Json& value, absl::string_view path,
                                     bool allow_empty = false) const;
  // One of `allowed`.
  absl::StatusOr<std::string> Enum(const Json& value, absl::string_view path,
                                   const std::vector<std::string>& allowed) const;
  // A list of non-empty strings.
  absl::StatusOr<std::vector<std::string>> StringList(const Json& value,
                                                      absl::string_view path) const;
  // An integer in [min, max] (no fractions: 2.0 is a number, not an integer).
  absl::StatusOr<int64_t> Integer(const Json& value, absl::string_view path, int64_t min,
                                  int64_t max) const;
  absl::StatusOr<double> Number(const Json& value, absl::string_view path) const;
  // true or false.
  absl::StatusOr<bool> Boolean(const Json& value, absl::string_view path) const;
  // A number of at least 0.
  absl::StatusOr<double> NonNegativeNumber(const Json& value, absl::string_view path) const;

 private:
  std::string origin_;
};

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_JSON_READER_H_
