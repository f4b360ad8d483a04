#ifndef PTXBENCH_RESULTS_REPORT_GROUP_ACCUMULATOR_H_
#define PTXBENCH_RESULTS_REPORT_GROUP_ACCUMULATOR_H_

// The running sums of one group of a report (results/report/metrics.h), from which
// its GroupReport is computed at the end. The definitions are in
// docs/REPORTS.md.

#include <array>
#include <cstdint>
#include <vector>

#include "ptxbench/v1/report.pb.h"
#include "results/report/facts.h"
#include "results/report/scores.h"

namespace ptxbench::report {

// The p of fast_p (FastPThresholds in results/report/metrics.h).
inline constexpr std::array<double, 6> kFastPThresholds = {0, 0.5, 0.8, 1, 1.5, 2};

// The outcome classes of a turn (TurnOutcomes.classes), in the CSV's order.
inline constexpr std::array<const char*, 10> kOutcomeClasses = {
    "passed",           "incorrect", "compile_error", "runtime_error", "timeout",
    "library_fallback", "compiled",  "infra_error",   "no_kernel",     "pending"};

// The class of one turn: an index into kOutcomeClasses.
size_t OutcomeClass(const TurnFacts& turn);

// The edges between the speedup histogram's bins: 2^-3, 2^-2.5, ..., 2^3.
// The first bin is [0, 2^-3), the last [2^3, +inf).
const std::vector<double>& SpeedupBinEdges();

// The model latencies and evaluation times of every trajectory added, each
// trajectory's in the order of its turns. Groups refer to spans of them, so a
// sample is stored once however many groups count it, and Add allocates
// nothing per group.
class SampleStore {
 public:
  // Where a trajectory's samples begin.
  struct Offsets {
    size_t model_latency = 0;
    size_t eval = 0;
  };

  // Appends the samples of the trajectory's answered and evaluated turns.
  Offsets Append(const TrajectoryFacts& trajectory);

  const std::vector<int64_t>& model_latency_ms() const { return model_latency_ms_; }
  const std::vector<int64_t>& eval_ms() const { return eval_ms_; }

 private:
  std::vector<int64_t> model_latency_ms_;
  std::vector<int64_t> eval_ms_;
};

// A trajectory as one group counts it: its first `turns` turns only (all of
// them except in a group of the "turn" dimension) and the state it has in
// that view (docs/REPORTS.md, "The turn dimension").
struct TrajectoryView {
  const TrajectoryFacts* facts = nullptr;
  int turns = 0;
  // The turn limit of the view; pass_at_turn runs to the largest in a group.
  int limit = 0;
  ptxbench::v1::TrajectoryState state = ptxbench::v1::TRAJECTORY_STATE_UNSPECIFIED;
  SampleStore::Offsets samples;
  // Per turn: ln speedup of a correct turn with a positive finite speedup,
  // else 0; computed once per trajectory (LogSpeedups), not once per group.
  const double* log_speedups = nullptr;
};

// Fills `out` with the ln speedup of each of the trajectory's turns, as
// TrajectoryView::log_speedups holds them.
void LogSpeedups(const TrajectoryFacts& trajectory, std::vector<double>& out);

// The view of the whole trajectory.
TrajectoryView WholeView(const TrajectoryFacts& trajectory, SampleStore::Offsets samples);
// The view of the trajectory cut after turn `t` (1-based).
TrajectoryView CutView(const TrajectoryFacts& trajectory, SampleStore::Offsets samples, int t);

class GroupAccumulator {
 public:
  void Add(const TrajectoryView& view);
  // Fills every metric of `out` (not its key) from the sums and the spans of
  // `samples` that Add recorded; `scratch` is reused between groups.
  void Finish(const SampleStore& samples, std::vector<int64_t>& scratch,
              ptxbench::v1::GroupReport* out) const;

 private:
  void AddUsage(const ptxbench::v1::Usage& usage);
  static constexpr int kStates = 7;  // TrajectoryState values, UNSPECIFIED included
  static constexpr int kBins = 14;   // SpeedupBinEdges().size() + 1

  void AddBestKernel(const TurnFacts& best, double log_speedup);

  int64_t trajectories_ = 0;
  int64_t finished_ = 0;
  std::array<int64_t, kStates> by_state_{};
  int64_t correct_ = 0;
  // Index of the first correct turn -> trajectories.
  std::vector<int64_t> first_correct_at_;
  int max_limit_ = 0;
  int64_t target_met_ = 0;

  std::array<int64_t, kFastPThresholds.size()> fast_p_{};
  int64_t speedup_count_ = 0;
  double log_speedup_sum_ = 0;
  double best_speedup_ = 0;
  std::array<int64_t, kBins> bins_{};
  int64_t roofline_count_ = 0;
  double roofline_sum_ = 0;

  std::vector<std::array<int64_t, kOutcomeClasses.size()>> outcomes_;
  int64_t first_turn_failed_ = 0;
  int64_t rescued_ = 0;

  ptxbench::v1::Usage tokens_;
  double cost_usd_ = 0;
  int64_t model_calls_ = 0;
  int64_t evaluations_ = 0;
  // The samples of one trajectory's view: the first `*_count` of its samples
  // in the SampleStore (they are in turn order, so a cut view's are a prefix).
  struct Spans {
    size_t model_latency_begin;
    size_t eval_begin;
    uint32_t model_latency_count;
    uint32_t eval_count;
  };
  std::vector<Spans> spans_;

  // The percentiles of the samples of `spans_` in `store`, each span's
  // from spans.*begin, spans.*count of them.
  void Percentiles(const std::vector<int64_t>& store, size_t Spans::*begin, uint32_t Spans::*count,
                   std::vector<int64_t>& scratch, ptxbench::v1::Percentiles* out) const;

  int64_t simulated_trajectories_ = 0;
  int64_t scripted_turns_ = 0;

  // Fallbacks (docs/REPORTS.md, "Fallbacks").
  int64_t correct_by_checks_ = 0;
  // Held-out workloads (docs/REPORTS.md, "Held-out workloads").
  int64_t held_out_trajectories_ = 0;
  int64_t correct_on_shown_ = 0;
  int64_t found_out_ = 0;
  int64_t passed_turns_ = 0;
  int64_t fallback_correct_turns_ = 0;

  // Scores (docs/REPORTS.md, "Scores").
  ScoreAccumulator scores_;
};

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_GROUP_ACCUMULATOR_H_
