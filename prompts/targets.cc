#include "prompts/targets.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/gpu_arch.h"

namespace ptxbench::prompts {
namespace {

// What a model is told of the GPUs of one architecture.
struct Known {
  const char* arch;
  std::vector<std::string> gpus;  // product names, for the text and target_hardware
  const char* ptx_version;        // the first PTX ISA version with its target
};

const std::vector<Known>& KnownArchitectures() {
  static const auto* known = new std::vector<Known>{
      {"sm_70", {"V100"}, "6.0"},          {"sm_75", {"T4"}, "6.3"},
      {"sm_80", {"A100"}, "7.0"},          {"sm_86", {"A10", "A40"}, "7.1"},
      {"sm_87", {}, "7.4"},                {"sm_89", {"L4", "L40S"}, "7.8"},
      {"sm_90", {"H100", "H200"}, "8.0"},  {"sm_100", {"B200"}, "8.6"},
      {"sm_103", {"B300"}, "8.8"},
  };
  return *known;
}

// An architecture this table does not know gets its name for a product and
// the newest ISA version listed, which the text offers "or later" anyway.
Known Lookup(const std::string& arch) {
  for (const Known& k : KnownArchitectures()) {
    if (arch == k.arch) return k;
  }
  return {"", {arch}, "8.8"};
}

// "9.0" of "sm_90", "10.3" of "sm_103".
std::string ComputeCapability(absl::string_view arch) {
  absl::ConsumePrefix(&arch, "sm_");
  if (arch.size() < 2) return std::string(arch);
  return absl::StrCat(arch.substr(0, arch.size() - 1), ".", arch.substr(arch.size() - 1));
}

// "Hopper: H100 / H200", "Ampere", or "" for an architecture of neither.
std::string Products(const std::string& arch, bool with_family) {
  const std::vector<std::string>& gpus = Lookup(arch).gpus;
  const bool named = !gpus.empty() && gpus.front() != arch;
  const std::string family(FamilyTitle(arch));
  const std::string list = named ? absl::StrJoin(gpus, " / ") : "";
  if (!with_family || family.empty()) return list;
  return list.empty() ? family : absl::StrCat(family, ": ", list);
}

}  // namespace

TargetText DescribeTargets(const std::vector<std::string>& architectures) {
  TargetText t;
  std::vector<std::string> targets, hardware, capabilities, described;
  for (const std::string& arch : architectures) {
    targets.push_back(CompileTarget(arch));
    for (const std::string& gpu : Lookup(arch).gpus) hardware.push_back(absl::StrCat("\"", gpu, "\""));
    const std::string products = Products(arch, /*with_family=*/true);
    capabilities.push_back(products.empty()
                               ? ComputeCapability(arch)
                               : absl::StrCat(ComputeCapability(arch), " (", products, ")"));
    described.push_back(DescribeArchitecture(arch));
  }
  const std::string& first = architectures.front();
  t.sm = targets.front();
  t.compute = absl::StrCat("compute_", absl::StripPrefix(t.sm, "sm_"));
  t.ptx_version = Lookup(first).ptx_version;
  t.target_hardware = absl::StrJoin(hardware, ", ");
  if (architectures.size() == 1) {
    const std::string family(FamilyTitle(first)), products = Products(first, false);
    t.target_gpus = absl::StrCat(family, family.empty() ? "" : " ", "GPUs (", products,
                                 products.empty() ? "" : ", ", "compute capability ",
                                 ComputeCapability(first), ", compiled for ", t.sm, ")");
    t.headline = absl::StrCat("an NVIDIA ", family, family.empty() ? "" : " ", "GPU (", t.sm, ")");
    return t;
  }
  const std::string each = absl::StrJoin(targets, ", ");
  t.target_gpus = absl::StrCat("GPUs of compute capability ", absl::StrJoin(capabilities, " and "),
                               ", each kernel compiled for the GPU that runs it (", each, ")");
  t.headline = absl::StrCat("NVIDIA GPUs of ", absl::StrJoin(described, " and "),
                            "; it is built for the GPU that runs it (", each, ")");
  std::vector<std::string> per_gpu;
  for (size_t i = 0; i < architectures.size(); ++i) {
    per_gpu.push_back(absl::StrCat(targets[i], " on ", described[i]));
  }
  t.build_note = absl::StrCat(" Each GPU builds it for itself: ", absl::StrJoin(per_gpu, ", "),
                              "; the lines above show the first.");
  return t;
}

std::string FillTargets(absl::string_view text, const TargetText& targets) {
  return absl::StrReplaceAll(text, {{"{{target_gpus}}", targets.target_gpus},
                                    {"{{sm}}", targets.sm},
                                    {"{{compute}}", targets.compute},
                                    {"{{ptx_version}}", targets.ptx_version},
                                    {"{{target_hardware}}", targets.target_hardware},
                                    {"{{build_note}}", targets.build_note}});
}

std::vector<std::string> FamiliesNamedBy(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  auto any = [&](std::initializer_list<absl::string_view> marks) {
    return std::any_of(marks.begin(), marks.end(),
                       [&](absl::string_view m) { return absl::StrContains(lower, m); });
  };
  std::vector<std::string> families;
  // "sm90_plus" (PTXBench's documents for Hopper and later) names no family.
  if (any({"hopper", "h100", "h200", "h800"})) families.push_back("Hopper");
  if (any({"blackwell", "b200", "b300", "sm100", "sm_100", "sm103", "sm_103"})) {
    families.push_back("Blackwell");
  }
  return families;
}

}  // namespace ptxbench::prompts
