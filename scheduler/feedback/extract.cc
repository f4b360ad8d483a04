#include "scheduler/feedback/extract.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "workloads/launch_spec.h"
#include "workloads/solution.h"

namespace ptxbench::scheduler {
namespace {

struct FencedBlock {
  std::string tag;   // lower-cased first word of the info string
  std::string body;  // the lines between the fences, each ending in '\n'
};

// An opening or closing fence: up to three spaces, then three or more
// backticks. Sets *ticks to the backtick count and *info to the rest.
bool ParseFence(absl::string_view line, size_t* ticks, absl::string_view* info) {
  size_t indent = 0;
  while (indent < line.size() && indent < 4 && line[indent] == ' ') ++indent;
  if (indent > 3) return false;
  size_t n = 0;
  while (indent + n < line.size() && line[indent + n] == '`') ++n;
  if (n < 3) return false;
  *ticks = n;
  *info = absl::StripAsciiWhitespace(line.substr(indent + n));
  return true;
}

// Splits an answer into its fenced blocks, in order. A block left open at the
// end of the answer runs to the end (models often stop mid-block).
std::vector<FencedBlock> SplitFencedBlocks(absl::string_view answer) {
  std::vector<FencedBlock> blocks;
  bool open = false;
  size_t open_ticks = 0;
  FencedBlock current;
  for (absl::string_view line : absl::StrSplit(answer, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t ticks = 0;
    absl::string_view info;
    bool fence = ParseFence(line, &ticks, &info);
    if (!open) {
      // Inline spans such as ```x``` on one line are not blocks.
      if (fence && info.find('`') == absl::string_view::npos) {
        open = true;
        open_ticks = ticks;
        current = FencedBlock{};
        absl::string_view tag = info.substr(0, info.find_first_of(" \t{"));
        current.tag = absl::AsciiStrToLower(tag);
      }
      continue;
    }
    if (fence && ticks >= open_ticks && info.empty()) {
      blocks.push_back(std::move(current));
      open = false;
      continue;
    }
    current.body.append(line.data(), line.size());
    current.body.push_back('\n');
  }
  if (open) blocks.push_back(std::move(current));
  return blocks;
}

std::vector<absl::string_view> TagsFor(absl::string_view language) {
  if (language == "cuda") return {"cpp", "c++", "cuda", "cu"};
  if (language == "ptx") return {"ptx"};
  if (language == "solution") return {"json"};
  if (language == "triton") return {"python"};  // PTXBench's test scripts: ```python only
  return {};
}

bool LooksLikeKernel(absl::string_view body, absl::string_view language) {
  if (language == "ptx") return absl::StrContains(body, ".entry");
  if (language == "solution") return workloads::LooksLikeSolution(body);
  // A Triton module is a kernel when it both defines one and exports run():
  // a helper block with only a @triton.jit function is not the answer.
  if (language == "triton") {
    return absl::StrContains(body, "@triton.jit") && absl::StrContains(body, "def run(");
  }
  return absl::StrContains(body, "PTXB_EXPORT") || absl::StrContains(body, "__global__") ||
         absl::StrContains(body, "<<<");
}

bool IsBlank(absl::string_view s) { return absl::StripAsciiWhitespace(s).empty(); }

// The last ```json block that names an entry: a raw-PTX answer's launch spec.
std::optional<std::string> LaunchSpecBlock(const std::vector<FencedBlock>& blocks) {
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (it->tag == "json" && absl::StrContains(it->body, "\"entry\"")) return it->body;
  }
  return std::nullopt;
}

std::optional<std::string> FindKernelBlock(const std::vector<FencedBlock>& blocks,
                                           absl::string_view language) {
  std::vector<absl::string_view> tags = TagsFor(language);
  const FencedBlock* last_non_empty = nullptr;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    bool tag_matches = false;
    for (absl::string_view tag : tags) tag_matches = tag_matches || it->tag == tag;
    if (!tag_matches || IsBlank(it->body)) continue;
    if (LooksLikeKernel(it->body, language)) return it->body;
    if (last_non_empty == nullptr) last_non_empty = &*it;
  }
  if (last_non_empty == nullptr) return std::nullopt;
  return last_non_empty->body;
}

}  // namespace

std::optional<std::string> ExtractKernel(absl::string_view answer, absl::string_view language) {
  std::vector<FencedBlock> blocks = SplitFencedBlocks(answer);
  std::optional<std::string> kernel = FindKernelBlock(blocks, language);
  if (!kernel || language != "ptx") return kernel;
  std::optional<std::string> spec = LaunchSpecBlock(blocks);
  if (!spec) return kernel;  // the build check tells the model it is missing
  return workloads::WithLaunchSpecLine(*kernel, *spec);
}

}  // namespace ptxbench::scheduler
