#include "cli/terminal/format.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text_format.h"

namespace ptxbench::cli {

std::string ProgressBar(int64_t done, int64_t total, int width) {
  int filled = 0;
  if (total > 0 && width > 0) {
    const int64_t clamped = std::clamp<int64_t>(done, 0, total);
    filled = static_cast<int>(clamped * width / total);
  }
  return absl::StrCat("[", std::string(filled, '#'), std::string(std::max(width - filled, 0), '-'),
                      "]");
}

std::string Fraction(int64_t done, int64_t total) {
  const int64_t percent = total > 0 ? done * 100 / total : 0;
  return absl::StrCat(done, "/", total, " (", percent, "%)");
}

namespace {

// The first `max` code points of `text`.
absl::string_view Prefix(absl::string_view text, size_t max) {
  size_t points = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (points == max) return text.substr(0, i);
      ++points;
    }
  }
  return text;
}

}  // namespace

std::string OneLine(absl::string_view text, size_t max) {
  std::string flat(text);
  std::replace_if(
      flat.begin(), flat.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  if (DisplayWidth(flat) <= max) return flat;
  if (max <= 3) return std::string(Prefix(flat, max));
  return absl::StrCat(Prefix(flat, max - 3), "...");
}

std::string Excerpt(absl::string_view text, int max_lines, int max_columns) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  std::string out;
  const int shown = std::min<int>(max_lines, static_cast<int>(lines.size()));
  for (int i = 0; i < shown; ++i) {
    absl::string_view line = lines[i];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    absl::StrAppend(&out, OneLine(line, max_columns), "\n");
  }
  const int rest = static_cast<int>(lines.size()) - shown;
  if (rest > 0)
    absl::StrAppend(&out, "... (", rest, rest == 1 ? " more line)\n" : " more lines)\n");
  return out;
}

std::string Indent(absl::string_view text, absl::string_view indent) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.empty()) return "";
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::StrAppend(&out, line.empty() ? "" : indent, line, "\n");
  }
  return out;
}

std::string FormatUnixMs(int64_t unix_ms) {
  if (unix_ms == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(unix_ms),
                          absl::LocalTimeZone());
}

std::string FormatAge(int64_t unix_ms, absl::Time now) {
  if (unix_ms == 0) return "never";
  const int64_t s = std::max<int64_t>(0, absl::ToInt64Seconds(now - absl::FromUnixMillis(unix_ms)));
  if (s < 120) return absl::StrCat(s, "s ago");
  if (s < 2 * 3600) return absl::StrCat(s / 60, "m ago");
  if (s < 2 * 86400) return absl::StrCat(s / 3600, "h ago");
  return absl::StrCat(s / 86400, "d ago");
}

std::string ReferenceLabel(absl::string_view reference) {
  return reference.empty() ? "" : absl::StrCat(" (", reference, ")");
}

}  // namespace ptxbench::cli
