#ifndef PTXBENCH_PIPELINES_PAIRS_H_
#define PTXBENCH_PIPELINES_PAIRS_H_

// The pairs stage (docs/PIPELINES.md): from a derived fix-it experiment,
// each wrong kernel with the correct kernel that fixed it (the first, or
// every one), as PTXBench collects its Fixit pairs.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "pipelines/select.h"
#include "ptxbench/v1/client.pb.h"

namespace ptxbench::pipelines {

// One line of a derive stage's items.jsonl: which turn a derived
// trajectory (by its sample index) starts from.
struct Item {
  int sample_index = 0;
  std::string experiment_id, trajectory_id, definition, status;
  int turn = 0;
  std::string kernel_sha256, log_sha256;
};
absl::StatusOr<std::vector<Item>> ReadItemsJsonl(absl::string_view text);

struct Pair {
  Item wrong;
  Row fixed;  // a PASSED turn of the derived trajectory
};

struct Pairs {
  std::vector<Pair> pairs;
  int64_t items = 0;     // derived trajectories
  int64_t repaired = 0;  // those with a fix that passed the filters
};

// `derived` are the derived experiment's trajectories (results detail);
// `params` the pairs stage's (which, min_speedup, arch_features).
Pairs MakePairs(const std::vector<Item>& items, const std::string& experiment_id,
                const std::vector<ptxbench::v1::Trajectory>& derived,
                const nlohmann::json& params);

std::string PairsJsonl(const Pairs& p);
nlohmann::json PairsCounts(const Pairs& p);

}  // namespace ptxbench::pipelines

#endif  // PTXBENCH_PIPELINES_PAIRS_H_
