#include "results/report/scores.h"

#include <algorithm>
#include <cmath>

namespace ptxbench::report {
namespace {

bool IsPositive(double value) { return value > 0 && std::isfinite(value); }

}  // namespace

void ScoreAccumulator::AddCorrectTurn(int index, double speedup, double log_speedup, bool rescued) {
  // A correct kernel that was not timed has no speedup to compare.
  if (!IsPositive(speedup)) return;
  ++timed_correct_turns_;
  if (speedup < 1) ++slower_turns_;
  LogSum& all = rescue_[rescued ? 1 : 0];
  ++all.count;
  all.sum += log_speedup;
  if (rescue_by_turn_.size() <= static_cast<size_t>(index)) rescue_by_turn_.resize(index + 1);
  LogSum& at = rescue_by_turn_[index][rescued ? 1 : 0];
  ++at.count;
  at.sum += log_speedup;
}

void ScoreAccumulator::AddWeighted(WeightedMean& mean, double weight, double value) {
  ++mean.count;
  mean.weight += weight;
  mean.sum += weight * value;
}

void ScoreAccumulator::AddTrajectory(double importance, const TurnFacts* best) {
  // An importance that is not a finite non-negative number (the parser
  // refuses those) weighs nothing rather than poisoning the sums.
  const double weight = importance >= 0 && std::isfinite(importance) ? importance : 0;
  if (best == nullptr) {
    // No correct kernel: it scores 0 in both.
    AddWeighted(roofline_, weight, 0);
    AddWeighted(sol_, weight, 0);
    return;
  }
  // A correct kernel whose figure is unknown is left out: 0 would call it
  // as bad as an incorrect one.
  if (IsPositive(best->weighted_roofline)) AddWeighted(roofline_, weight, best->weighted_roofline);
  if (best->sol_score >= 0 && std::isfinite(best->sol_score)) {
    AddWeighted(sol_, weight, std::min(best->sol_score, 1.0));
  }
}

void ScoreAccumulator::FinishRescue(const RescueSums& sums, int turn, v1::RescueSpeedups* out) {
  out->set_turn(turn);
  auto fill = [](const LogSum& s, v1::SpeedupMean* mean) {
    mean->set_count(s.count);
    mean->set_geomean(s.count == 0 ? 0 : std::exp(s.sum / s.count));
  };
  fill(sums[0], out->mutable_persistent());
  fill(sums[1], out->mutable_rescued());
}

void ScoreAccumulator::Finish(v1::GroupReport* out) const {
  auto mean = [](const WeightedMean& m) { return m.weight > 0 ? m.sum / m.weight : 0; };
  out->set_weighted_roofline_count(roofline_.count);
  out->set_weighted_roofline_weight(roofline_.weight);
  out->set_weighted_roofline(mean(roofline_));
  out->set_sol_score_count(sol_.count);
  out->set_sol_score_weight(sol_.weight);
  out->set_sol_score(mean(sol_));
  out->set_timed_correct_turns(timed_correct_turns_);
  out->set_slower_turns(slower_turns_);
  out->set_slower_share(
      timed_correct_turns_ == 0 ? 0 : static_cast<double>(slower_turns_) / timed_correct_turns_);
  FinishRescue(rescue_, 0, out->mutable_rescue_speedups());
  for (size_t i = 0; i < rescue_by_turn_.size(); ++i) {
    FinishRescue(rescue_by_turn_[i], static_cast<int>(i), out->add_rescue_speedups_by_turn());
  }
}

}  // namespace ptxbench::report
