#ifndef PTXBENCH_WORKLOADS_INPUT_DISTRIBUTION_H_
#define PTXBENCH_WORKLOADS_INPUT_DISTRIBUTION_H_

// How the harness draws a call's random inputs (docs/MEASUREMENT.md, "Input
// distributions"). Standard-normal inputs alone let through kernels that are
// right only for values of about that size: one that clamps, saturates a
// narrow accumulator, or whose error is hidden below atol when the outputs
// are small. So each call draws its float inputs from one of several
// distributions, chosen by the call's secret seed: the kernel cannot know
// which before it reads its inputs, and every checked and timed call is
// judged. Integer and boolean inputs (indices, lengths, masks) are drawn as
// before, whatever the distribution.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench::workloads {

enum class InputDistribution {
  kNormal,     // "normal": standard normal, rounded to the dtype (as FlashInfer-Bench draws)
  kOutliers,   // "outliers": normal, one element in 1024 (chosen by the seed) times 64
  kScaledDown, // "scaled_1e-3": normal times 1e-3
  kScaledUp,   // "scaled_64": normal times 64
};

// Every distribution, in this order: a definition's default.
std::vector<InputDistribution> AllInputDistributions();

// "normal", "outliers", "scaled_1e-3", "scaled_64".
absl::string_view InputDistributionName(InputDistribution d);
std::optional<InputDistribution> ParseInputDistribution(absl::string_view name);

// What a distribution does to the standard-normal values: each selected
// element times `factor`; every element when `one_in` is 1, else one in
// `one_in`, chosen by the fill's seed.
struct InputScaling {
  float factor = 1;
  int64_t one_in = 1;
};
InputScaling ScalingOf(InputDistribution d);

// The distribution of the call whose inputs come from `seed`, among
// `allowed` (kNormal when empty): a function of the seed alone, so a call
// and its check agree, and spread evenly over the list.
InputDistribution DistributionForCall(uint64_t seed, const std::vector<InputDistribution>& allowed);

// "normal, outliers, scaled_1e-3, scaled_64".
std::string DescribeInputDistributions(const std::vector<InputDistribution>& list);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_INPUT_DISTRIBUTION_H_
