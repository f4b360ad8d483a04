#include "results/exports/text.h"

#include <array>
#include <charconv>
#include <cstddef>

namespace ptxbench::exports {
namespace {

constexpr absl::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// What a CSV field needs, by byte (AppendCsvField).
constexpr unsigned char kQuote = 1, kNonAscii = 2;

// The length of the valid UTF-8 sequence at text[i] (i < size), or 0 when
// the bytes there are not one (overlong forms, surrogates and values past
// U+10FFFF included).
size_t Utf8Length(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

bool IsValidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = Utf8Length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// `text` with every invalid byte replaced.
std::string RepairUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8Length(text, i);
    if (n == 0) {
      out.append(kReplacement.data(), kReplacement.size());
      ++i;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace

void AppendJsonString(std::string* out, absl::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const size_t n = Utf8Length(text, i);
      if (n != 0) {
        i += n;
        continue;
      }
      out->append(text.data() + run, i - run);
      out->append(kReplacement.data(), kReplacement.size());
      run = ++i;
      continue;
    }
    out->append(text.data() + run, i - run);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xF]);
    }
    run = ++i;
  }
  out->append(text.data() + run, text.size() - run);
  out->push_back('"');
}

void AppendCsvField(std::string* out, absl::string_view text) {
  // One table lookup per byte: what, if anything, the field needs.
  static constexpr auto kClass = [] {
    std::array<unsigned char, 256> c{};
    for (unsigned char q : {',', '"', '\r', '\n'}) c[q] = kQuote;
    for (int b = 0x80; b < 0x100; ++b) c[b] = kNonAscii;
    return c;
  }();
  unsigned char needs = 0;
  for (char c : text) needs |= kClass[static_cast<unsigned char>(c)];
  std::string repaired;
  if ((needs & kNonAscii) && !IsValidUtf8(text)) {
    repaired = RepairUtf8(text);
    text = repaired;
  }
  if (!(needs & kQuote)) {
    out->append(text.data(), text.size());
    return;
  }
  out->push_back('"');
  for (char c : text) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendDouble(std::string* out, double value) {
  char buffer[32];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, r.ptr);
}

std::string Rfc3339Millis(int64_t unix_ms) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

std::string Rfc3339(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

}  // namespace ptxbench::exports
