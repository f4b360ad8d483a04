#include "common/gpu_arch.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ptxbench {
namespace {

struct Family {
  const char* name;
  const char* title;
  std::vector<std::string> architectures;
};

const std::vector<Family>& Families() {
  static const auto* families = new std::vector<Family>{
      {"ampere", "Ampere", {"sm_80", "sm_86", "sm_87"}},
      {"ada", "Ada", {"sm_89"}},
      {"hopper", "Hopper", {"sm_90"}},
      {"blackwell", "Blackwell", {"sm_100", "sm_103"}},
  };
  return *families;
}

// The compute capability's major of "sm_NN" / "sm_NNN" (the minor is the
// last digit), or -1 when `name` is not one.
int Major(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "sm_") || name.size() < 2 || name.size() > 3) return -1;
  int cc = 0;
  if (!absl::SimpleAtoi(name, &cc) || !absl::ascii_isdigit(name.front())) return -1;
  return cc / 10;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseArchitectures(const std::vector<std::string>& names) {
  if (names.empty()) {
    return absl::InvalidArgumentError(
        "no GPU architecture named (a family such as \"hopper\", or \"sm_90\")");
  }
  std::vector<std::string> out;
  for (const std::string& raw : names) {
    const std::string name = absl::AsciiStrToLower(raw);
    auto family = std::find_if(Families().begin(), Families().end(),
                               [&](const Family& f) { return name == f.name; });
    if (family != Families().end()) {
      out.insert(out.end(), family->architectures.begin(), family->architectures.end());
      continue;
    }
    absl::string_view arch = name;
    absl::ConsumeSuffix(&arch, "a");  // sm_90a is the target of sm_90 GPUs
    if (Major(arch) < 7) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", raw,
          "' is neither a family (ampere, ada, hopper, blackwell) nor a GPU architecture "
          "sm_NN of compute capability 7.0 or newer (e.g. sm_90)"));
    }
    out.emplace_back(arch);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const std::vector<std::string>& DefaultArchitectures() {
  static const auto* hopper = new std::vector<std::string>{"sm_90"};
  return *hopper;
}

std::string CompileTarget(absl::string_view sm_arch) {
  return Major(sm_arch) >= 9 ? absl::StrCat(sm_arch, "a") : std::string(sm_arch);
}

bool IsCompileTarget(absl::string_view target) {
  absl::string_view arch = target;
  const bool specific = absl::ConsumeSuffix(&arch, "a");
  return Major(arch) >= 7 && CompileTarget(arch) == target && (specific || Major(arch) < 9);
}

absl::string_view FamilyTitle(absl::string_view sm_arch) {
  for (const Family& f : Families()) {
    if (TargetsArchitecture(f.architectures, sm_arch)) return f.title;
  }
  return "";
}

std::string DescribeArchitecture(absl::string_view sm_arch) {
  const absl::string_view title = FamilyTitle(sm_arch);
  return title.empty() ? std::string(sm_arch) : absl::StrCat(sm_arch, " (", title, ")");
}

bool TargetsArchitecture(const std::vector<std::string>& targets, absl::string_view sm_arch) {
  return std::find(targets.begin(), targets.end(), sm_arch) != targets.end();
}

}  // namespace ptxbench
