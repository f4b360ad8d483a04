#ifndef PTXBENCH_RESULTS_REPORT_DEVIANCE_H_
#define PTXBENCH_RESULTS_REPORT_DEVIANCE_H_

// How much of the variance in trajectory correctness the definition's
// category and the model each explain (docs/REPORTS.md, "Variance in
// correctness"): the deviance of logistic models of "the trajectory has a
// correct turn" with no predictor, the category only, and the model only.
// A logistic model with one categorical predictor fits each level's rate
// exactly, so the deviances are sums over the levels' counts: no iterative
// fit, and the answer does not depend on a solver's tolerance.

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "ptxbench/v1/report.pb.h"
#include "results/report/facts.h"

namespace ptxbench::report {

// The binomial deviance of a set of levels, each with `n` trials of which
// `k` succeeded, under a model that fits each level's rate k/n:
// -2 * sum over levels of [k ln(k/n) + (n-k) ln((n-k)/n)], 0 ln 0 = 0.
struct LevelCounts {
  int64_t n = 0;
  int64_t k = 0;
};
double FittedDeviance(const absl::flat_hash_map<std::string, LevelCounts>& levels);

// The category level of a trajectory: its definition's categories joined
// by "+" in their order ("" when it has none), so that a trajectory counts
// once, in one level, as a logistic model's observation must.
void CategoryLevel(const TrajectoryFacts& trajectory, std::string* out);

class VarianceAccumulator {
 public:
  // The whole trajectory (never a turn cut).
  void Add(const TrajectoryFacts& trajectory);
  void Finish(ptxbench::v1::CorrectnessVariance* out) const;

 private:
  int64_t n_ = 0;
  int64_t k_ = 0;
  absl::flat_hash_map<std::string, LevelCounts> categories_;
  absl::flat_hash_map<std::string, LevelCounts> models_;
  std::string scratch_;
};

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_DEVIANCE_H_
