#include "prompts/languages.h"

namespace ptxbench::prompts {

const std::vector<std::string>& KernelLanguages() {
  static const auto* languages = new std::vector<std::string>{"cuda", "ptx", "solution", "triton"};
  return *languages;
}

absl::string_view AnswerFence(absl::string_view language) {
  if (language == "ptx") return "ptx";
  if (language == "solution") return "json";
  if (language == "triton") return "python";
  return "cpp";
}

}  // namespace ptxbench::prompts
