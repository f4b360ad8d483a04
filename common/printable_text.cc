#include "common/printable_text.h"

namespace ptxbench {

std::string PrintableText(absl::string_view text, size_t max_bytes) {
  std::string out(text.substr(0, max_bytes));
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

}  // namespace ptxbench
