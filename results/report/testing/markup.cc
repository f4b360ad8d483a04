#include "results/report/testing/markup.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ptxbench::report::testing {

int Occurrences(absl::string_view text, absl::string_view what) {
  int n = 0;
  for (size_t at = text.find(what); at != absl::string_view::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

std::string TagBalance(absl::string_view html) {
  static const std::vector<std::string> kVoid = {"meta", "br", "img", "hr", "link", "input"};
  std::vector<std::string> open;
  size_t at = 0;
  while ((at = html.find('<', at)) != absl::string_view::npos) {
    size_t end = html.find('>', at);
    if (end == absl::string_view::npos) return absl::StrCat("unterminated tag at ", at);
    absl::string_view tag = html.substr(at + 1, end - at - 1);
    at = end + 1;
    if (tag.empty() || tag[0] == '!') continue;  // <!DOCTYPE html>
    const bool closing = tag[0] == '/';
    if (closing) tag.remove_prefix(1);
    std::string name(tag.substr(0, tag.find_first_of(" /")));
    if (closing) {
      if (open.empty() || open.back() != name) {
        return absl::StrCat("</", name, "> closes <", open.empty() ? "nothing" : open.back(),
                            "> at ", at);
      }
      open.pop_back();
    } else if (tag.back() != '/' && std::find(kVoid.begin(), kVoid.end(), name) == kVoid.end()) {
      open.push_back(name);
      if (name == "style") at = html.find("</style>", at);
    }
  }
  return open.empty() ? "" : absl::StrCat("<", open.back(), "> never closed");
}

}  // namespace ptxbench::report::testing
