#include "results/report/group_accumulator.h"

#include <algorithm>
#include <cmath>

namespace ptxbench::report {
namespace {

using ::ptxbench::v1::TrajectoryState;

bool IsTerminal(TrajectoryState state) {
  return state == v1::SUBMITTED || state == v1::LIMITS_EXCEEDED || state == v1::FAILED ||
         state == v1::CANCELLED;
}

// Correct and fallback correct are the verdict's (verdict::Correct and
// verdict::FallbackCorrect, stored with the turn), never read off the status
// here.
bool IsCorrect(const TurnFacts& turn) { return turn.evaluated && turn.correct; }
bool IsFallbackCorrect(const TurnFacts& turn) { return turn.evaluated && turn.fallback_correct; }

// Nothing more will happen to the turn: its kernel was evaluated, or its
// answer had none.
bool IsFinished(const TurnFacts& turn) {
  return turn.evaluated || (turn.answered && !turn.has_kernel);
}

double Rate(int64_t count, int64_t n) { return n == 0 ? 0 : static_cast<double>(count) / n; }

bool IsPositive(double value) { return value > 0 && std::isfinite(value); }

// Nearest-rank percentiles: the p-th is the value at 1-based rank
// ceil(p/100 * n) of the sorted sample, computed in integers so that no
// rounding moves a rank. Reorders `sample`.
void NearestRank(std::vector<int64_t>& sample, v1::Percentiles* out) {
  const int64_t n = static_cast<int64_t>(sample.size());
  out->set_count(n);
  if (n == 0) return;
  auto index = [n](int64_t percent) { return std::max<int64_t>(1, (percent * n + 99) / 100) - 1; };
  const int64_t i50 = index(50);
  const int64_t i95 = index(95);
  std::nth_element(sample.begin(), sample.begin() + i50, sample.end());
  // Everything after i50 is now >= the median, so p95 is selected there.
  if (i95 > i50) std::nth_element(sample.begin() + i50 + 1, sample.begin() + i95, sample.end());
  out->set_p50(static_cast<double>(sample[i50]));
  out->set_p95(static_cast<double>(sample[i95]));
}

}  // namespace

size_t OutcomeClass(const TurnFacts& turn) {
  if (turn.evaluated) {
    switch (turn.status) {
      case v1::PASSED:
        return 0;
      case v1::INCORRECT_SHAPE:
      case v1::INCORRECT_DTYPE:
      case v1::INCORRECT_NUMERICAL:
        return 1;
      case v1::COMPILE_ERROR:
        return 2;
      case v1::RUNTIME_ERROR:
        return 3;
      case v1::TIMEOUT:
        return 4;
      case v1::LIBRARY_FALLBACK:
        return 5;
      case v1::COMPILED:
        return 6;
      default:
        // INFRA_ERROR, and a result without a status (or one this build does
        // not know): it says nothing about the kernel, so it is not counted
        // as the kernel's failure, and every evaluated turn has a class.
        return 7;
    }
  }
  if (turn.answered && !turn.has_kernel) return 8;
  return 9;
}

const std::vector<double>& SpeedupBinEdges() {
  static const std::vector<double>* const kEdges = [] {
    auto* edges = new std::vector<double>;
    for (int half_octave = -6; half_octave <= 6; ++half_octave) {
      edges->push_back(std::exp2(half_octave / 2.0));
    }
    return edges;
  }();
  return *kEdges;
}

SampleStore::Offsets SampleStore::Append(const TrajectoryFacts& trajectory) {
  const Offsets offsets{model_latency_ms_.size(), eval_ms_.size()};
  for (const TurnFacts& turn : trajectory.turns) {
    if (turn.answered) model_latency_ms_.push_back(turn.model_latency_ms);
    if (turn.evaluated) eval_ms_.push_back(turn.eval_ms);
  }
  return offsets;
}

void LogSpeedups(const TrajectoryFacts& trajectory, std::vector<double>& out) {
  out.clear();
  for (const TurnFacts& turn : trajectory.turns) {
    const bool timed = turn.evaluated && turn.correct && IsPositive(turn.speedup);
    out.push_back(timed ? std::log(turn.speedup) : 0);
  }
}

TrajectoryView WholeView(const TrajectoryFacts& trajectory, SampleStore::Offsets samples) {
  const int turns = static_cast<int>(trajectory.turns.size());
  return {&trajectory, turns, std::max(trajectory.num_turns, turns), trajectory.state, samples};
}

void GroupAccumulator::AddUsage(const v1::Usage& usage) {
  tokens_.set_input_tokens(tokens_.input_tokens() + usage.input_tokens());
  tokens_.set_output_tokens(tokens_.output_tokens() + usage.output_tokens());
  tokens_.set_reasoning_tokens(tokens_.reasoning_tokens() + usage.reasoning_tokens());
  tokens_.set_cached_tokens(tokens_.cached_tokens() + usage.cached_tokens());
}

TrajectoryView CutView(const TrajectoryFacts& trajectory, SampleStore::Offsets samples, int t) {
  const int turns = static_cast<int>(trajectory.turns.size());
  TrajectoryView view{&trajectory, std::min(turns, t), t, trajectory.state, samples};
  // Past turn t the cut trajectory would have stopped at its limit: it went
  // on to a turn t+1, or it is live with turn t done. One that ended with t
  // turns or fewer keeps its state (docs/REPORTS.md, "The turn dimension").
  const bool went_on = turns > t;
  const bool live_after_t =
      turns == t && t > 0 && !IsTerminal(trajectory.state) && IsFinished(trajectory.turns[t - 1]);
  if (went_on || live_after_t) view.state = v1::LIMITS_EXCEEDED;
  return view;
}

void GroupAccumulator::Add(const TrajectoryView& view) {
  const TrajectoryFacts& trajectory = *view.facts;
  ++trajectories_;
  const int state = view.state >= 0 && view.state < kStates ? view.state : 0;
  ++by_state_[state];
  if (IsTerminal(view.state)) ++finished_;
  if (view.state == v1::SUBMITTED) ++target_met_;
  max_limit_ = std::max(max_limit_, view.limit);
  if (outcomes_.size() < static_cast<size_t>(view.turns)) outcomes_.resize(view.turns);

  bool simulated = trajectory.simulated;
  uint32_t answered = 0;
  uint32_t calls = 0;
  uint32_t evaluated = 0;
  int first_correct = -1;
  bool correct_by_checks = false;
  bool correct_on_shown = false;
  // A finished turn so far was not correct: a correct turn after it is
  // rescued, not persistent.
  bool failed_before = false;
  const TurnFacts* best = nullptr;
  double best_log_speedup = 0;
  for (int i = 0; i < view.turns; ++i) {
    const TurnFacts& turn = trajectory.turns[i];
    ++outcomes_[i][OutcomeClass(turn)];
    simulated = simulated || turn.simulated;
    if (turn.scripted) ++scripted_turns_;
    cost_usd_ += turn.cost_usd;
    if (turn.answered) {
      ++answered;
      calls += turn.model_calls;
      AddUsage(turn.usage);
    }
    if (turn.evaluated) ++evaluated;
    // Correct on all its workloads is correct on the shown ones.
    correct_on_shown =
        correct_on_shown || (turn.evaluated && (turn.shown_correct || IsCorrect(turn)));
    if (IsFallbackCorrect(turn)) {
      ++fallback_correct_turns_;
      correct_by_checks = true;
    }
    if (IsCorrect(turn)) {
      ++passed_turns_;
      correct_by_checks = true;
      if (first_correct < 0) first_correct = i;
      // Ties keep the earliest kernel.
      if (best == nullptr || turn.speedup > best->speedup) {
        best = &turn;
        best_log_speedup = view.log_speedups[i];
      }
      scores_.AddCorrectTurn(i, turn.speedup, view.log_speedups[i], failed_before);
    } else if (IsFinished(turn)) {
      failed_before = true;
    }
  }
  // An agent session's calls after its last evaluation count with the
  // whole trajectory (not with a turn cut short of it).
  if (view.turns == static_cast<int>(trajectory.turns.size())) {
    cost_usd_ += trajectory.session_tail_cost_usd;
    calls += trajectory.session_tail_calls;
    AddUsage(trajectory.session_tail_usage);
  }
  if (simulated) ++simulated_trajectories_;
  model_calls_ += calls;
  evaluations_ += evaluated;
  if (answered + evaluated > 0) {
    spans_.push_back({view.samples.model_latency, view.samples.eval, answered, evaluated});
  }

  if (correct_by_checks) ++correct_by_checks_;
  if (trajectory.held_out) ++held_out_trajectories_;
  if (correct_on_shown) ++correct_on_shown_;
  // Correct on what its model was shown, never on all its workloads.
  if (correct_on_shown && first_correct < 0) ++found_out_;
  scores_.AddTrajectory(trajectory.importance, best);
  if (first_correct >= 0) {
    ++correct_;
    if (first_correct_at_.size() <= static_cast<size_t>(first_correct)) {
      first_correct_at_.resize(first_correct + 1);
    }
    ++first_correct_at_[first_correct];
    AddBestKernel(*best, best_log_speedup);
  }
  if (view.turns > 0 && IsFinished(trajectory.turns[0]) && !IsCorrect(trajectory.turns[0])) {
    ++first_turn_failed_;
    if (first_correct > 0) ++rescued_;
  }
}

void GroupAccumulator::AddBestKernel(const TurnFacts& best, double log_speedup) {
  if (IsPositive(best.roofline)) {
    ++roofline_count_;
    roofline_sum_ += best.roofline;
  }
  const double speedup = best.speedup;
  if (!IsPositive(speedup)) return;
  ++speedup_count_;
  log_speedup_sum_ += log_speedup;
  best_speedup_ = std::max(best_speedup_, speedup);
  const std::vector<double>& edges = SpeedupBinEdges();
  ++bins_[std::upper_bound(edges.begin(), edges.end(), speedup) - edges.begin()];
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
    if (speedup > kFastPThresholds[i]) ++fast_p_[i];
  }
}

void GroupAccumulator::Percentiles(const std::vector<int64_t>& store, size_t Spans::*begin,
                                   uint32_t Spans::*count, std::vector<int64_t>& scratch,
                                   v1::Percentiles* out) const {
  scratch.clear();
  for (const Spans& spans : spans_) {
    const auto first = store.begin() + spans.*begin;
    scratch.insert(scratch.end(), first, first + spans.*count);
  }
  NearestRank(scratch, out);
}

void GroupAccumulator::Finish(const SampleStore& samples, std::vector<int64_t>& scratch,
                              v1::GroupReport* out) const {
  const int64_t n = trajectories_;
  out->set_trajectories(n);
  out->set_finished(finished_);
  for (int state = 1; state < kStates; ++state) {
    (*out->mutable_by_state())[v1::TrajectoryState_Name(state)] = by_state_[state];
  }

  out->set_correct(correct_);
  out->set_correct_rate(Rate(correct_, n));
  const int last_turn = std::max<int>(max_limit_, static_cast<int>(outcomes_.size()));
  int64_t passed = 0;
  for (int t = 1; t <= last_turn; ++t) {
    if (static_cast<size_t>(t - 1) < first_correct_at_.size()) passed += first_correct_at_[t - 1];
    v1::PassAtTurn* pass = out->add_pass_at_turn();
    pass->set_turn(t);
    pass->set_count(passed);
    pass->set_rate(Rate(passed, n));
  }
  out->set_target_met(target_met_);
  out->set_target_met_rate(Rate(target_met_, n));
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
    v1::FastP* fast = out->add_fast_p();
    fast->set_p(kFastPThresholds[i]);
    fast->set_count(fast_p_[i]);
    fast->set_rate(Rate(fast_p_[i], n));
  }

  out->set_speedup_count(speedup_count_);
  out->set_geomean_speedup(speedup_count_ == 0 ? 0 : std::exp(log_speedup_sum_ / speedup_count_));
  out->set_best_speedup(best_speedup_);
  const std::vector<double>& edges = SpeedupBinEdges();
  for (size_t i = 0; i < bins_.size(); ++i) {
    v1::SpeedupBin* bin = out->add_speedup_histogram();
    bin->set_lo(i == 0 ? 0 : edges[i - 1]);
    bin->set_hi(i < edges.size() ? edges[i] : 0);  // 0: +inf
    bin->set_count(bins_[i]);
  }
  out->set_roofline_count(roofline_count_);
  out->set_roofline_fraction(roofline_count_ == 0 ? 0 : roofline_sum_ / roofline_count_);

  for (size_t turn = 0; turn < outcomes_.size(); ++turn) {
    v1::TurnOutcomes* outcomes = out->add_outcomes_by_turn();
    outcomes->set_turn(static_cast<int>(turn));
    for (size_t c = 0; c < kOutcomeClasses.size(); ++c) {
      (*outcomes->mutable_classes())[kOutcomeClasses[c]] = outcomes_[turn][c];
    }
  }
  out->set_first_turn_failed(first_turn_failed_);
  out->set_rescued(rescued_);
  out->set_rescue_rate(Rate(rescued_, first_turn_failed_));

  *out->mutable_tokens() = tokens_;
  out->set_cost_usd(cost_usd_);
  out->set_cost_per_correct_usd(correct_ == 0 ? 0 : cost_usd_ / correct_);
  Percentiles(samples.model_latency_ms(), &Spans::model_latency_begin, &Spans::model_latency_count,
              scratch, out->mutable_model_latency_ms());
  Percentiles(samples.eval_ms(), &Spans::eval_begin, &Spans::eval_count, scratch,
              out->mutable_eval_time_ms());
  out->set_model_calls(model_calls_);
  out->set_evaluations(evaluations_);

  out->set_correct_by_checks(correct_by_checks_);
  out->set_held_out_trajectories(held_out_trajectories_);
  out->set_correct_on_shown(correct_on_shown_);
  out->set_correct_on_shown_rate(Rate(correct_on_shown_, n));
  out->set_found_out(found_out_);
  out->set_found_out_rate(Rate(found_out_, n));
  out->set_correct_by_checks_rate(Rate(correct_by_checks_, n));
  out->set_passed_turns(passed_turns_);
  out->set_fallback_correct_turns(fallback_correct_turns_);
  out->set_fallback_share(Rate(fallback_correct_turns_, fallback_correct_turns_ + passed_turns_));

  out->set_simulated_trajectories(simulated_trajectories_);
  out->set_scripted_turns(scripted_turns_);
  scores_.Finish(out);
}

}  // namespace ptxbench::report
