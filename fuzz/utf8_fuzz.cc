// Names and kernel sources an agent left are checked and escaped by
// common/utf8.h before they become proto strings: any bytes at all. Checks
// the validator against a second, code-point decoder written here, and
// that escaping is valid, reads back and leaves valid text alone.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/utf8.h"

namespace {

// The first bad offset, by decoding code points (a different route from
// common/utf8.cc's byte-range table).
size_t ReferenceFirstInvalid(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    size_t n;
    uint32_t cp, min;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      n = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return i;
    }
    if (i + n > s.size()) return i;
    for (size_t k = 1; k < n; ++k) {
      const uint8_t t = static_cast<uint8_t>(s[i + k]);
      if ((t & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (t & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n;
  }
  return std::string::npos;
}

// Reads EscapeInvalidUtf8's output back to bytes.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (i + 1 < s.size() && s[i + 1] == '\\') {
      out += '\\';
      ++i;
      continue;
    }
    if (i + 3 >= s.size() || s[i + 1] != 'x') __builtin_trap();
    out += static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16));
    i += 3;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const size_t bad = ptxbench::FirstInvalidUtf8(bytes);
  if (bad != ReferenceFirstInvalid(bytes)) __builtin_trap();
  const bool valid = bad == std::string::npos;
  if (valid != ptxbench::DescribeInvalidUtf8(bytes).empty()) __builtin_trap();
  const std::string escaped = ptxbench::EscapeInvalidUtf8(bytes);
  const std::string replaced = ptxbench::ReplaceInvalidUtf8(bytes);
  if (!ptxbench::IsValidUtf8(escaped) || !ptxbench::IsValidUtf8(replaced)) __builtin_trap();
  if (valid && (escaped != bytes || replaced != bytes)) __builtin_trap();
  if (!valid && Unescape(escaped) != bytes) __builtin_trap();
  return 0;
}
