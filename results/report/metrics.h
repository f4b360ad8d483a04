#ifndef PTXBENCH_RESULTS_REPORT_METRICS_H_
#define PTXBENCH_RESULTS_REPORT_METRICS_H_

// The metrics of `ptxbench report`: TrajectoryFacts in, an ExperimentReport
// out. Every metric is defined, with its formula, in docs/REPORTS.md; a change
// of any definition changes kMetricsVersion.

#include <array>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ptxbench/v1/report.pb.h"
#include "results/report/deviance.h"
#include "results/report/facts.h"
#include "results/report/group_accumulator.h"

namespace ptxbench::report {

inline constexpr char kMetricsVersion[] = "ptxbench.metrics.v3";

// The dimensions a grouping may name, in the order of the CSV's columns.
inline constexpr std::array<const char*, 5> kDimensions = {"model", "tag", "definition", "category",
                                                           "turn"};

// The p of fast_p: {0, 0.5, 0.8, 1, 1.5, 2}.
const std::vector<double>& FastPThresholds();

// Computes one experiment's report: Add every trajectory, then Finish once.
// Add costs one pass over the trajectory's turns per group it counts in (the
// total, and one group per grouping, times its categories and, with the
// "turn" dimension, its turns); its latency samples are stored once, and
// nothing is allocated per turn or per group beyond amortized growth.
// Not thread-safe.
class ReportBuilder {
 public:
  // `groupings`: each a list of dimensions among kDimensions. An empty list,
  // or an unknown or repeated dimension, is kInvalidArgument naming it.
  static absl::StatusOr<ReportBuilder> Create(std::vector<std::vector<std::string>> groupings);

  void Add(const TrajectoryFacts& trajectory);

  // Fills `total` and `groupings` (in the order given, groups sorted by key:
  // "turn" numerically, the rest as text). Leaves experiment_id, name and
  // eval_mode to the caller. Call once.
  ptxbench::v1::ExperimentReport Finish();

 private:
  enum class Dimension { kModel, kTag, kDefinition, kCategory, kTurn };

  struct Group {
    std::vector<std::string> values;  // one per dimension of the grouping
    int turn = 0;                     // the "turn" value, for sorting
    GroupAccumulator accumulator;
  };

  struct Grouping {
    std::vector<std::string> by;
    std::vector<Dimension> dimensions;
    // Key (the values, each as length:text) -> index in `groups`.
    absl::flat_hash_map<std::string, size_t> index;
    std::vector<Group> groups;
  };

  explicit ReportBuilder(std::vector<Grouping> groupings) : groupings_(std::move(groupings)) {}

  // Adds `view` to the group of every combination of values of the grouping's
  // dimensions from `dimension` on; key_ and values_ hold those before it.
  void AddCombinations(Grouping& grouping, size_t dimension, const TrajectoryView& view);
  void AddToGroup(Grouping& grouping, const TrajectoryView& view);
  static void SortGroups(Grouping& grouping);

  SampleStore samples_;
  GroupAccumulator total_;
  VarianceAccumulator variance_;
  std::vector<Grouping> groupings_;
  // Scratch of AddCombinations, kept to avoid allocating per trajectory.
  std::string key_;
  std::vector<double> log_speedups_;
  std::array<absl::string_view, kDimensions.size()> values_;
  int turn_value_ = 0;
};

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_METRICS_H_
