#include "worker/compile/ptxas_log.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace ptxbench::worker {
namespace {

// The integer just before `unit` in `line` ("10 registers" -> 10), or -1.
int64_t NumberBefore(absl::string_view line, absl::string_view unit) {
  size_t pos = line.find(unit);
  if (pos == absl::string_view::npos) return -1;
  absl::string_view head = absl::StripTrailingAsciiWhitespace(line.substr(0, pos));
  size_t start = head.find_last_of(" \t,:");
  int64_t value = -1;
  if (!absl::SimpleAtoi(head.substr(start == absl::string_view::npos ? 0 : start + 1), &value)) {
    return -1;
  }
  return value;
}

// The text between the first pair of quotes after `marker`.
absl::string_view QuotedAfter(absl::string_view line, absl::string_view marker) {
  size_t pos = line.find(marker);
  if (pos == absl::string_view::npos) return "";
  absl::string_view rest = line.substr(pos + marker.size());
  size_t open = rest.find('\'');
  size_t close = open == absl::string_view::npos ? open : rest.find('\'', open + 1);
  if (close == absl::string_view::npos) return "";
  return rest.substr(open + 1, close - open - 1);
}

}  // namespace

std::vector<ptxbench::v1::KernelResources> ParsePtxasVerbose(absl::string_view log) {
  std::vector<ptxbench::v1::KernelResources> kernels;
  ptxbench::v1::KernelResources* current = nullptr;     // the entry being compiled
  ptxbench::v1::KernelResources* properties = nullptr;  // "Function properties for"
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, "Compiling entry function")) {
      kernels.emplace_back();
      kernels.back().set_kernel_name(std::string(QuotedAfter(line, "Compiling entry function")));
      current = &kernels.back();
      properties = nullptr;
    } else if (absl::StrContains(line, "Compiling function")) {
      current = nullptr;  // a device function: not a kernel
      properties = nullptr;
    } else if (size_t pos = line.find("Function properties for"); pos != line.npos) {
      absl::string_view name =
          absl::StripAsciiWhitespace(line.substr(pos + sizeof("Function properties for") - 1));
      properties = nullptr;
      for (auto& k : kernels) {
        if (k.kernel_name() == name) properties = &k;
      }
    } else if (absl::StrContains(line, "bytes stack frame")) {
      if (properties != nullptr) {
        properties->set_stack_frame_bytes(
            std::max<int64_t>(0, NumberBefore(line, "bytes stack frame")));
        properties->set_spill_store_bytes(
            std::max<int64_t>(0, NumberBefore(line, "bytes spill stores")));
        properties->set_spill_load_bytes(
            std::max<int64_t>(0, NumberBefore(line, "bytes spill loads")));
      }
    } else if (absl::StrContains(line, "registers") && absl::StrContains(line, "Used")) {
      if (current != nullptr) {
        current->set_registers(
            static_cast<int32_t>(std::max<int64_t>(0, NumberBefore(line, "registers"))));
        current->set_shared_mem_bytes(std::max<int64_t>(0, NumberBefore(line, "bytes smem")));
      }
    }
  }
  return kernels;
}

}  // namespace ptxbench::worker
