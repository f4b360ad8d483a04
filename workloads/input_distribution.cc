#include "workloads/input_distribution.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "workloads/reference/philox.h"

namespace ptxbench::workloads {
namespace {

constexpr InputDistribution kAll[] = {InputDistribution::kNormal, InputDistribution::kOutliers,
                                      InputDistribution::kScaledDown,
                                      InputDistribution::kScaledUp};

// A different mix of the seed than the fills' own (references.cc), so the
// choice says nothing about the values and the reverse.
uint64_t Mix(uint64_t x) {
  return reference::Mix64(x + (0x9E3779B97F4A7C15ull ^ 0x64697374726962ull));  // "distrib"
}

}  // namespace

std::vector<InputDistribution> AllInputDistributions() { return {std::begin(kAll), std::end(kAll)}; }

absl::string_view InputDistributionName(InputDistribution d) {
  switch (d) {
    case InputDistribution::kNormal: return "normal";
    case InputDistribution::kOutliers: return "outliers";
    case InputDistribution::kScaledDown: return "scaled_1e-3";
    case InputDistribution::kScaledUp: return "scaled_64";
  }
  return "?";
}

std::optional<InputDistribution> ParseInputDistribution(absl::string_view name) {
  for (InputDistribution d : kAll) {
    if (InputDistributionName(d) == name) return d;
  }
  return std::nullopt;
}

InputScaling ScalingOf(InputDistribution d) {
  switch (d) {
    case InputDistribution::kNormal: return {1, 1};
    case InputDistribution::kOutliers: return {64, 1024};
    case InputDistribution::kScaledDown: return {1e-3f, 1};
    case InputDistribution::kScaledUp: return {64, 1};
  }
  return {};
}

InputDistribution DistributionForCall(uint64_t seed, const std::vector<InputDistribution>& allowed) {
  if (allowed.empty()) return InputDistribution::kNormal;
  return allowed[Mix(seed) % allowed.size()];
}

std::string DescribeInputDistributions(const std::vector<InputDistribution>& list) {
  return absl::StrJoin(list, ", ", [](std::string* out, InputDistribution d) {
    absl::StrAppend(out, InputDistributionName(d));
  });
}

}  // namespace ptxbench::workloads
