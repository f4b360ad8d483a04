#include "results/report/testing/sample_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ptxbench::report::testing {
namespace {

using ::ptxbench::v1::ExperimentReport;
using ::ptxbench::v1::GroupingReport;
using ::ptxbench::v1::GroupReport;
using ::ptxbench::v1::ReportResponse;

const std::vector<double> kFastP = {0, 0.5, 0.8, 1.0, 1.5, 2.0};
// The bins' edges, and a typical speedup inside each (for the geomean).
const std::vector<double> kBinEdges = {0, 0.5, 0.8, 1.0, 1.5, 2.0, 4.0};
const std::vector<double> kBinTypical = {0.35, 0.65, 0.9, 1.2, 1.7, 2.6, 4.6};

int64_t Round(double v) { return static_cast<int64_t>(std::llround(std::max(0.0, v))); }

double Rate(int64_t count, int64_t of) { return of > 0 ? static_cast<double>(count) / of : 0; }

// A (model, tag) cell, from a few made-up knobs of how good the model is.
GroupReport Cell(const SampleOptions& o, size_t m, size_t t) {
  static const double kModelBase[] = {0.55, 0.72, 0.40, 0.63};
  static const double kTagBonus[] = {0.0, 0.12, -0.06, 0.05};
  GroupReport g;
  (*g.mutable_key())["model"] = o.models[m];
  (*g.mutable_key())["tag"] = o.tags[t];
  const int64_t n = o.trajectories_per_cell;
  const double share = std::clamp(o.skill * (kModelBase[m % 4] + kTagBonus[t % 4]), 0.0, 0.95);
  g.set_trajectories(n);
  g.set_finished(n);

  // Solved ones mostly early: 55% of the eventual passes at turn 1.
  std::vector<int64_t> pass(o.turns + 1, 0);
  for (int k = 1; k <= o.turns; ++k) {
    pass[k] = Round(n * share * (1 - std::pow(0.45, k)) / (1 - std::pow(0.45, o.turns)));
    auto* p = g.add_pass_at_turn();
    p->set_turn(k);
    p->set_count(pass[k]);
    p->set_rate(Rate(pass[k], n));
  }
  const int64_t correct = pass[o.turns];
  g.set_correct(correct);
  g.set_correct_rate(Rate(correct, n));
  g.set_target_met(correct / 2);
  g.set_target_met_rate(Rate(correct / 2, n));

  static const double kFastShare[] = {1.0, 0.9, 0.75, 0.55, 0.3, 0.12};
  std::vector<int64_t> fast;
  for (size_t i = 0; i < kFastP.size(); ++i) {
    double share_p = kFastShare[i] + (i >= 3 ? 0.08 * (m % 2) : 0);
    fast.push_back(std::min(i == 0 ? correct : fast.back(), Round(correct * share_p)));
    auto* f = g.add_fast_p();
    f->set_p(kFastP[i]);
    f->set_count(fast.back());
    f->set_rate(Rate(fast.back(), n));
  }
  // The bins are the differences of the fast_p counts (same edges), and the
  // top one the few past 4x.
  fast.push_back(Round(correct * 0.03 * (m + 1)));
  fast.back() = std::min(fast.back(), fast[fast.size() - 2]);
  double log_sum = 0;
  double best = 0;
  for (size_t b = 0; b < kBinEdges.size(); ++b) {
    int64_t count = b + 1 < fast.size() ? fast[b] - fast[b + 1] : fast[b];
    auto* bin = g.add_speedup_histogram();
    bin->set_lo(kBinEdges[b]);
    bin->set_hi(b + 1 < kBinEdges.size() ? kBinEdges[b + 1] : 0);
    bin->set_count(count);
    log_sum += count * std::log(kBinTypical[b]);
    if (count > 0) best = kBinTypical[b] * 1.08;
  }
  g.set_speedup_count(correct);
  g.set_geomean_speedup(correct > 0 ? std::exp(log_sum / correct) : 0);
  g.set_best_speedup(best);
  g.set_roofline_count(correct);
  g.set_roofline_fraction(correct > 0 ? 0.31 + 0.06 * m : 0);
  // Scores: every trajectory weighs 1 and every correct kernel has both
  // figures; an incorrect trajectory scores 0.
  g.set_weighted_roofline_count(n);
  g.set_weighted_roofline_weight(static_cast<double>(n));
  g.set_weighted_roofline(Rate(correct, n) * g.roofline_fraction());
  g.set_sol_score_count(n);
  g.set_sol_score_weight(static_cast<double>(n));
  g.set_sol_score(Rate(correct, n) * (0.52 + 0.04 * m));
  g.set_timed_correct_turns(correct + correct / 3);
  g.set_slower_turns(Round((correct + correct / 3) * (0.47 - 0.05 * m)));
  g.set_slower_share(Rate(g.slower_turns(), g.timed_correct_turns()));
  g.mutable_rescue_speedups()->mutable_persistent()->set_count(pass[1]);
  g.mutable_rescue_speedups()->mutable_persistent()->set_geomean(pass[1] > 0 ? 1.1 + 0.1 * m : 0);
  g.mutable_rescue_speedups()->mutable_rescued()->set_count(correct - pass[1]);
  g.mutable_rescue_speedups()->mutable_rescued()->set_geomean(correct > pass[1] ? 0.8 + 0.05 * m
                                                                              : 0);

  int64_t calls = 0;
  int64_t no_kernel = 0;
  for (int k = 0; k < o.turns; ++k) {
    const int64_t running = n - pass[k];
    const int64_t passed = pass[k + 1] - pass[k];
    const int64_t failed = running - passed;
    auto* turn = g.add_outcomes_by_turn();
    turn->set_turn(k);
    auto& classes = *turn->mutable_classes();
    classes["passed"] = passed;
    classes["compile_error"] = failed * (25 - 4 * k) / 100;
    classes["runtime_error"] = failed * 15 / 100;
    classes["timeout"] = failed * 5 / 100;
    classes["no_kernel"] = failed * 10 / 100;
    classes["library_fallback"] = failed * 5 / 100;
    classes["incorrect"] = failed - classes["compile_error"] - classes["runtime_error"] -
                           classes["timeout"] - classes["no_kernel"] - classes["library_fallback"];
    calls += running;
    no_kernel += classes["no_kernel"];
  }
  g.set_first_turn_failed(n - pass[1]);
  g.set_rescued(correct - pass[1]);
  g.set_rescue_rate(Rate(correct - pass[1], n - pass[1]));

  g.mutable_tokens()->set_input_tokens(calls * 5200);
  g.mutable_tokens()->set_output_tokens(calls * (1800 + 600 * m));
  g.mutable_tokens()->set_cached_tokens(calls * 3100);
  g.set_cost_usd(calls * (0.014 + 0.009 * m));
  g.set_cost_per_correct_usd(correct > 0 ? g.cost_usd() / correct : 0);
  g.set_model_calls(calls);
  g.set_evaluations(calls - no_kernel);
  g.mutable_model_latency_ms()->set_count(calls);
  g.mutable_model_latency_ms()->set_p50(17000 + 5500 * m);
  g.mutable_model_latency_ms()->set_p95(46000 + 9000 * m);
  g.mutable_eval_time_ms()->set_count(calls - no_kernel);
  g.mutable_eval_time_ms()->set_p50(2300 + 150 * t);
  g.mutable_eval_time_ms()->set_p95(6100 + 400 * t);

  auto& states = *g.mutable_by_state();
  for (const char* s : {"AWAITING_MODEL", "AWAITING_EVAL", "FAILED", "CANCELLED"}) states[s] = 0;
  states["SUBMITTED"] = correct / 2;
  states["LIMITS_EXCEEDED"] = n - correct / 2;
  if (o.simulated) g.set_simulated_trajectories(n);
  if (o.models[m] == o.scripted_model) g.set_scripted_turns(calls);
  return g;
}

void AddPercentiles(const ptxbench::v1::Percentiles& from, ptxbench::v1::Percentiles* to) {
  // A count-weighted mean of the percentiles: wrong in general, right
  // enough for a picture.
  int64_t count = to->count() + from.count();
  if (count == 0) return;
  to->set_p50((to->p50() * to->count() + from.p50() * from.count()) / count);
  to->set_p95((to->p95() * to->count() + from.p95() * from.count()) / count);
  to->set_count(count);
}

// The sum of `cells` as one group with `key`.
GroupReport Merge(const std::vector<const GroupReport*>& cells,
                  std::map<std::string, std::string> key) {
  GroupReport g = *cells.front();
  g.mutable_key()->clear();
  for (auto& [k, v] : key) (*g.mutable_key())[k] = v;
  double log_sum = g.speedup_count() > 0 ? g.speedup_count() * std::log(g.geomean_speedup()) : 0;
  double roofline_sum = g.roofline_count() * g.roofline_fraction();
  double weighted_roofline_sum = g.weighted_roofline_weight() * g.weighted_roofline();
  double sol_sum = g.sol_score_weight() * g.sol_score();
  auto log_of = [](const ptxbench::v1::SpeedupMean& mean) {
    return mean.count() > 0 ? mean.count() * std::log(mean.geomean()) : 0.0;
  };
  double persistent_log_sum = log_of(g.rescue_speedups().persistent());
  double rescued_log_sum = log_of(g.rescue_speedups().rescued());
  for (size_t c = 1; c < cells.size(); ++c) {
    const GroupReport& o = *cells[c];
    g.set_trajectories(g.trajectories() + o.trajectories());
    g.set_finished(g.finished() + o.finished());
    for (auto& [state, count] : o.by_state()) (*g.mutable_by_state())[state] += count;
    g.set_correct(g.correct() + o.correct());
    for (int i = 0; i < g.pass_at_turn_size(); ++i) {
      auto* p = g.mutable_pass_at_turn(i);
      p->set_count(p->count() + o.pass_at_turn(i).count());
    }
    g.set_target_met(g.target_met() + o.target_met());
    for (int i = 0; i < g.fast_p_size(); ++i) {
      g.mutable_fast_p(i)->set_count(g.fast_p(i).count() + o.fast_p(i).count());
    }
    if (o.speedup_count() > 0) log_sum += o.speedup_count() * std::log(o.geomean_speedup());
    g.set_speedup_count(g.speedup_count() + o.speedup_count());
    g.set_best_speedup(std::max(g.best_speedup(), o.best_speedup()));
    for (int i = 0; i < g.speedup_histogram_size(); ++i) {
      auto* bin = g.mutable_speedup_histogram(i);
      bin->set_count(bin->count() + o.speedup_histogram(i).count());
    }
    roofline_sum += o.roofline_count() * o.roofline_fraction();
    g.set_roofline_count(g.roofline_count() + o.roofline_count());
    for (int i = 0; i < g.outcomes_by_turn_size(); ++i) {
      auto& classes = *g.mutable_outcomes_by_turn(i)->mutable_classes();
      for (auto& [cls, count] : o.outcomes_by_turn(i).classes()) classes[cls] += count;
    }
    g.set_first_turn_failed(g.first_turn_failed() + o.first_turn_failed());
    weighted_roofline_sum += o.weighted_roofline_weight() * o.weighted_roofline();
    g.set_weighted_roofline_count(g.weighted_roofline_count() + o.weighted_roofline_count());
    g.set_weighted_roofline_weight(g.weighted_roofline_weight() + o.weighted_roofline_weight());
    sol_sum += o.sol_score_weight() * o.sol_score();
    g.set_sol_score_count(g.sol_score_count() + o.sol_score_count());
    g.set_sol_score_weight(g.sol_score_weight() + o.sol_score_weight());
    g.set_timed_correct_turns(g.timed_correct_turns() + o.timed_correct_turns());
    g.set_slower_turns(g.slower_turns() + o.slower_turns());
    persistent_log_sum += log_of(o.rescue_speedups().persistent());
    rescued_log_sum += log_of(o.rescue_speedups().rescued());
    auto* rescue = g.mutable_rescue_speedups();
    rescue->mutable_persistent()->set_count(rescue->persistent().count() +
                                            o.rescue_speedups().persistent().count());
    rescue->mutable_rescued()->set_count(rescue->rescued().count() +
                                         o.rescue_speedups().rescued().count());
    g.set_rescued(g.rescued() + o.rescued());
    auto* tokens = g.mutable_tokens();
    tokens->set_input_tokens(tokens->input_tokens() + o.tokens().input_tokens());
    tokens->set_output_tokens(tokens->output_tokens() + o.tokens().output_tokens());
    tokens->set_cached_tokens(tokens->cached_tokens() + o.tokens().cached_tokens());
    g.set_cost_usd(g.cost_usd() + o.cost_usd());
    AddPercentiles(o.model_latency_ms(), g.mutable_model_latency_ms());
    AddPercentiles(o.eval_time_ms(), g.mutable_eval_time_ms());
    g.set_model_calls(g.model_calls() + o.model_calls());
    g.set_evaluations(g.evaluations() + o.evaluations());
    g.set_simulated_trajectories(g.simulated_trajectories() + o.simulated_trajectories());
    g.set_scripted_turns(g.scripted_turns() + o.scripted_turns());
  }
  const int64_t n = g.trajectories();
  g.set_correct_rate(Rate(g.correct(), n));
  g.set_target_met_rate(Rate(g.target_met(), n));
  for (auto& p : *g.mutable_pass_at_turn()) p.set_rate(Rate(p.count(), n));
  for (auto& f : *g.mutable_fast_p()) f.set_rate(Rate(f.count(), n));
  g.set_geomean_speedup(g.speedup_count() > 0 ? std::exp(log_sum / g.speedup_count()) : 0);
  g.set_roofline_fraction(g.roofline_count() > 0 ? roofline_sum / g.roofline_count() : 0);
  g.set_rescue_rate(Rate(g.rescued(), g.first_turn_failed()));
  auto mean = [](double sum, double weight) { return weight > 0 ? sum / weight : 0; };
  g.set_weighted_roofline(mean(weighted_roofline_sum, g.weighted_roofline_weight()));
  g.set_sol_score(mean(sol_sum, g.sol_score_weight()));
  g.set_slower_share(Rate(g.slower_turns(), g.timed_correct_turns()));
  auto* rescue = g.mutable_rescue_speedups();
  auto geomean = [](double log_sum, int64_t count) {
    return count > 0 ? std::exp(log_sum / count) : 0.0;
  };
  rescue->mutable_persistent()->set_geomean(
      geomean(persistent_log_sum, rescue->persistent().count()));
  rescue->mutable_rescued()->set_geomean(geomean(rescued_log_sum, rescue->rescued().count()));
  g.set_cost_per_correct_usd(g.correct() > 0 ? g.cost_usd() / g.correct() : 0);
  return g;
}

}  // namespace

ExperimentReport SampleExperiment(const SampleOptions& options) {
  ExperimentReport e;
  e.set_experiment_id(options.id);
  e.set_name(options.name);
  e.set_eval_mode(options.eval_mode);
  std::vector<GroupReport> cells;
  for (size_t m = 0; m < options.models.size(); ++m) {
    for (size_t t = 0; t < options.tags.size(); ++t) cells.push_back(Cell(options, m, t));
  }
  std::vector<const GroupReport*> all;
  for (const GroupReport& c : cells) all.push_back(&c);
  *e.mutable_total() = Merge(all, {});

  // Groups sorted by key, as the report sorts them.
  auto grouping = [&](const std::vector<std::string>& by) {
    std::map<std::vector<std::string>, std::vector<const GroupReport*>> groups;
    for (const GroupReport& c : cells) {
      std::vector<std::string> key;
      for (const std::string& dim : by) key.push_back(c.key().at(dim));
      groups[key].push_back(&c);
    }
    GroupingReport* out = e.add_groupings();
    for (const std::string& dim : by) out->add_by(dim);
    for (auto& [key, members] : groups) {
      std::map<std::string, std::string> named;
      for (size_t i = 0; i < by.size(); ++i) named[by[i]] = key[i];
      *out->add_groups() = Merge(members, named);
    }
  };
  grouping({"model"});
  grouping({"tag"});
  grouping({"model", "tag"});
  return e;
}

ReportResponse SampleResponse(std::vector<ExperimentReport> experiments) {
  ReportResponse r;
  for (ExperimentReport& e : experiments) *r.add_experiments() = std::move(e);
  r.set_metrics_version("ptxbench.metrics.v3");
  for (double p : kFastP) r.add_fast_p_thresholds(p);
  r.set_generated_unix_ms(1748779200000);  // 2025-06-01 12:00:00 UTC
  return r;
}

ReportResponse SampleReport() { return SampleResponse({SampleExperiment({})}); }

ReportResponse SimulatedReport() {
  SampleOptions o;
  o.name = "smoke-simulated";
  o.id = "exp-0002";
  o.simulated = true;
  o.skill = 0.8;
  return SampleResponse({SampleExperiment(o)});
}

ReportResponse ComparisonReport() {
  SampleOptions b;
  b.name = "gemm-sweep-sim";
  b.id = "exp-0003";
  b.models = {"gpt-4.1", "quickstart-scripted"};
  b.scripted_model = "quickstart-scripted";
  b.simulated = true;
  b.skill = 1.15;
  return SampleResponse({SampleExperiment({}), SampleExperiment(b)});
}

}  // namespace ptxbench::report::testing
