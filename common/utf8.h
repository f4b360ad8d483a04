#ifndef PTXBENCH_COMMON_UTF8_H_
#define PTXBENCH_COMMON_UTF8_H_

// UTF-8 as protobuf's `string` fields and JSON require it: the one place
// ptxbench decides whether bytes it did not write (an agent's kernel file,
// its file names, a CLI's last words) are text. A `string` field that is not
// valid UTF-8 makes the whole message fail to parse at the receiver, so
// everything hostile that becomes such a field passes through here first
// (docs/SECURITY.md, "Agent sessions").
//
// Valid means well-formed UTF-8 as RFC 3629 and protobuf's validator define
// it: no overlong forms, no surrogates (U+D800..U+DFFF), nothing past
// U+10FFFF, no truncated sequence. NUL is valid.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace ptxbench {

// The offset of the first byte that does not begin (or continue) a
// well-formed sequence; absl::string_view::npos when all of `text` is valid.
// For a truncated or malformed sequence it is the offset of its first byte.
size_t FirstInvalidUtf8(absl::string_view text);

inline bool IsValidUtf8(absl::string_view text) {
  return FirstInvalidUtf8(text) == absl::string_view::npos;
}

// Where `text` stops being UTF-8, in words for a refusal: "byte 0xff at
// offset 1234 (line 12, column 5)" (line and column counted in bytes from
// 1); "" when it is valid.
std::string DescribeInvalidUtf8(absl::string_view text);

// `text` as valid UTF-8 that reads back to the same bytes: when `text` is
// valid it is returned as it is; otherwise each byte outside a well-formed
// sequence is written `\xNN` (two lower-case hex digits) and each backslash
// `\\`, so two different inputs that are not UTF-8 never give the same
// result. The caller says that a result was escaped (valid text that looks
// like an escape stays as it is).
std::string EscapeInvalidUtf8(absl::string_view text);

// `text` with each maximal run of bytes outside well-formed sequences
// replaced by U+FFFD, as a lossy repair for text that only has to stay
// readable (a log line, a reason); valid text is returned as it is.
std::string ReplaceInvalidUtf8(absl::string_view text);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_UTF8_H_
