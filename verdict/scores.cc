#include "verdict/scores.h"

#include <cmath>

#include "verdict/verdict.h"

namespace ptxbench::verdict {
namespace {

namespace v1 = ::ptxbench::v1;

bool IsPositive(double value) { return value > 0 && std::isfinite(value); }

}  // namespace

std::optional<double> WorkloadSolScore(double speedup, double roofline_fraction) {
  const double s = speedup;
  const double r = roofline_fraction;
  if (!IsPositive(s) || !IsPositive(r) || r >= s) return std::nullopt;
  if (r >= 1) return 1.0;
  // 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL)) with T_k = 1, T_b = s, T_SOL = r.
  // r < 1 and r < s keep both terms of the denominator positive.
  return (s - r) / ((s - r) + (1 - r));
}

Scores WeightedScores(const v1::EvalResult& result, const WorkloadImportance& importance) {
  Scores scores;
  if (!Correct(result)) return scores;
  double roofline_weight = 0;
  double roofline_sum = 0;
  double sol_weight = 0;
  double sol_sum = 0;
  for (const v1::WorkloadTrace& trace : result.traces()) {
    double weight = importance ? importance(trace.workload_uuid()) : 1.0;
    if (!(weight >= 0) || !std::isfinite(weight)) weight = 0;
    if (IsPositive(trace.roofline_fraction())) {
      roofline_weight += weight;
      roofline_sum += weight * trace.roofline_fraction();
    }
    if (const std::optional<double> sol =
            WorkloadSolScore(trace.speedup(), trace.roofline_fraction())) {
      sol_weight += weight;
      sol_sum += weight * *sol;
    }
  }
  if (roofline_weight > 0) scores.weighted_roofline = roofline_sum / roofline_weight;
  if (sol_weight > 0) scores.sol_score = sol_sum / sol_weight;
  return scores;
}

}  // namespace ptxbench::verdict
