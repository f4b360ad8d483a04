#include "common/printable_text.h"

namespace ptxbench {
namespace {

std::string Printable(absl::string_view text, size_t max_bytes, bool keep_lines) {
  std::string out(text.substr(0, max_bytes));
  for (char& c : out) {
    const unsigned char u = static_cast<unsigned char>(c);
    const bool printable = u >= 0x20 && u <= 0x7e;
    if (!printable && !(keep_lines && (c == '\n' || c == '\t'))) c = '?';
  }
  return out;
}

}  // namespace

std::string PrintableText(absl::string_view text, size_t max_bytes) {
  return Printable(text, max_bytes, /*keep_lines=*/false);
}

std::string PrintableLines(absl::string_view text, size_t max_bytes) {
  return Printable(text, max_bytes, /*keep_lines=*/true);
}

}  // namespace ptxbench
