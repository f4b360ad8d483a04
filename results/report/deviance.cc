#include "results/report/deviance.h"

#include <algorithm>
#include <cmath>

namespace ptxbench::report {
namespace {

// x ln(x / n), with 0 ln 0 = 0.
double XLogRate(int64_t x, int64_t n) {
  return x == 0 ? 0 : static_cast<double>(x) * std::log(static_cast<double>(x) / n);
}

void Count(absl::flat_hash_map<std::string, LevelCounts>& levels, absl::string_view level,
           bool correct) {
  auto it = levels.find(level);
  if (it == levels.end()) it = levels.emplace(std::string(level), LevelCounts{}).first;
  ++it->second.n;
  if (correct) ++it->second.k;
}

double Share(double null_deviance, double deviance) {
  // Every trajectory correct, or none: there is no variance to explain.
  if (null_deviance <= 0) return 0;
  // A fitted model never has more deviance than the null one; rounding may
  // say so by an ulp.
  return std::max(0.0, (null_deviance - deviance) / null_deviance);
}

}  // namespace

double FittedDeviance(const absl::flat_hash_map<std::string, LevelCounts>& levels) {
  double sum = 0;
  for (const auto& [level, c] : levels) sum += XLogRate(c.k, c.n) + XLogRate(c.n - c.k, c.n);
  return -2 * sum;
}

void CategoryLevel(const TrajectoryFacts& trajectory, std::string* out) {
  out->clear();
  for (size_t i = 0; i < trajectory.categories.size(); ++i) {
    if (i > 0) out->push_back('+');
    out->append(trajectory.categories[i]);
  }
}

void VarianceAccumulator::Add(const TrajectoryFacts& trajectory) {
  bool correct = false;
  for (const TurnFacts& turn : trajectory.turns)
    correct = correct || (turn.evaluated && turn.correct);
  ++n_;
  if (correct) ++k_;
  if (trajectory.categories.size() == 1) {
    Count(categories_, trajectory.categories[0], correct);
  } else {
    CategoryLevel(trajectory, &scratch_);
    Count(categories_, scratch_, correct);
  }
  Count(models_, trajectory.model, correct);
}

void VarianceAccumulator::Finish(v1::CorrectnessVariance* out) const {
  const double null_deviance = -2 * (XLogRate(k_, n_) + XLogRate(n_ - k_, n_));
  const double category = FittedDeviance(categories_);
  const double model = FittedDeviance(models_);
  out->set_trajectories(n_);
  out->set_correct(k_);
  out->set_null_deviance(null_deviance);
  out->set_category_levels(static_cast<int64_t>(categories_.size()));
  out->set_category_deviance(category);
  out->set_category_share(Share(null_deviance, category));
  out->set_model_levels(static_cast<int64_t>(models_.size()));
  out->set_model_deviance(model);
  out->set_model_share(Share(null_deviance, model));
}

}  // namespace ptxbench::report
