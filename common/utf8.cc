#include "common/utf8.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace ptxbench {
namespace {

bool Between(absl::string_view text, size_t i, uint8_t low, uint8_t high) {
  if (i >= text.size()) return false;
  const uint8_t c = static_cast<uint8_t>(text[i]);
  return c >= low && c <= high;
}

// The length of the well-formed sequence that starts at `i` (RFC 3629,
// table 3-7 of the Unicode standard), or 0 when none does.
size_t SequenceAt(absl::string_view text, size_t i) {
  const uint8_t lead = static_cast<uint8_t>(text[i]);
  if (lead < 0x80) return 1;
  // The range of the second byte by lead byte; later bytes are 80..BF.
  uint8_t low = 0x80, high = 0xBF;
  size_t length;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;  // a continuation byte, C0, C1 or F5..FF
  }
  if (!Between(text, i + 1, low, high)) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (!Between(text, i + k, 0x80, 0xBF)) return 0;
  }
  return length;
}

}  // namespace

size_t FirstInvalidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) return i;
    i += n;
  }
  return absl::string_view::npos;
}

std::string DescribeInvalidUtf8(absl::string_view text) {
  const size_t bad = FirstInvalidUtf8(text);
  if (bad == absl::string_view::npos) return "";
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < bad; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return absl::StrFormat("byte 0x%02x at offset %d (line %d, column %d)",
                         static_cast<uint8_t>(text[bad]), bad, line, bad - line_start + 1);
}

std::string EscapeInvalidUtf8(absl::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<uint8_t>(text[i]));
      ++i;
    } else if (text[i] == '\\') {
      out += "\\\\";
      ++i;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
  }
  return out;
}

std::string ReplaceInvalidUtf8(absl::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  bool in_bad_run = false;
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) {
      if (!in_bad_run) out += "\xEF\xBF\xBD";  // U+FFFD
      in_bad_run = true;
      ++i;
      continue;
    }
    in_bad_run = false;
    out.append(text.data() + i, n);
    i += n;
  }
  return out;
}

}  // namespace ptxbench
