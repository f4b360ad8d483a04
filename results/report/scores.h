#ifndef PTXBENCH_RESULTS_REPORT_SCORES_H_
#define PTXBENCH_RESULTS_REPORT_SCORES_H_

// The score figures of one group of a report (docs/REPORTS.md, "Scores"):
// the importance-weighted roofline and SOL-Score of the trajectories' best
// kernels, the share of correct kernels slower than the reference, and the
// speedups of persistent and rescued kernels per turn. GroupAccumulator
// feeds it as it walks a trajectory's turns, so it costs no pass of its own.

#include <array>
#include <cstdint>
#include <vector>

#include "ptxbench/v1/report.pb.h"
#include "results/report/facts.h"

namespace ptxbench::report {

class ScoreAccumulator {
 public:
  // A correct turn at index `index`, its speedup and ln speedup (0 when it
  // was not timed); `rescued` when a finished turn before it was not
  // correct.
  void AddCorrectTurn(int index, double speedup, double log_speedup, bool rescued);
  // The trajectory, once: its definition's importance and its best correct
  // kernel (nullptr when it has none).
  void AddTrajectory(double importance, const TurnFacts* best);
  void Finish(ptxbench::v1::GroupReport* out) const;

 private:
  struct LogSum {
    int64_t count = 0;
    double sum = 0;  // of ln speedup
  };
  struct WeightedMean {
    int64_t count = 0;
    double weight = 0;
    double sum = 0;  // of weight * value
  };
  // [0]: persistent, [1]: rescued.
  using RescueSums = std::array<LogSum, 2>;

  static void AddWeighted(WeightedMean& mean, double weight, double value);
  static void FinishRescue(const RescueSums& sums, int turn, ptxbench::v1::RescueSpeedups* out);

  WeightedMean roofline_;
  WeightedMean sol_;
  int64_t timed_correct_turns_ = 0;
  int64_t slower_turns_ = 0;
  RescueSums rescue_{};
  std::vector<RescueSums> rescue_by_turn_;
};

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_SCORES_H_
