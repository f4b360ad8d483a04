#include "results/report/text.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/lineage.h"
#include "common/text_format.h"
#include "results/report/group_accumulator.h"
#include "results/report/metrics.h"
#include "results/report/text_cells.h"
#include "results/report/text_compare.h"
#include "results/report/text_scores.h"

namespace ptxbench::report {
namespace {

using v1::ExperimentReport;
using v1::GroupReport;

constexpr size_t kWidth = 120;

// A line of the total's summary: a label padded to a column, then its text.
void AppendLine(absl::string_view label, absl::string_view text, std::string* out) {
  absl::StrAppendFormat(out, "  %-10s %s\n", label, text);
}

// A summary line of many cells (pass@turn of a long trajectory), wrapped to
// kWidth columns under its first cell.
void AppendCells(absl::string_view label, const std::vector<std::string>& cells, std::string* out) {
  const std::string indent(13, ' ');
  std::string line = absl::StrFormat("  %-10s", label);
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0 && line.size() + 2 + cells[i].size() > kWidth) {
      absl::StrAppend(out, line, "\n");
      line = indent + cells[i];
    } else {
      absl::StrAppend(&line, i == 0 ? " " : "  ", cells[i]);
    }
  }
  absl::StrAppend(out, cells.empty() ? line + " -" : line, "\n");
}

void AppendHeader(const ExperimentReport& experiment, std::string* out) {
  absl::StrAppend(out, "== experiment ", ExperimentLabel(experiment), " (",
                  experiment.experiment_id(), "), eval mode ", EvalModeName(experiment.eval_mode()),
                  experiment.language().empty() ? "" : ", language ", experiment.language(), "\n");
  if (const std::string made = LineageText(experiment.lineage_json()); !made.empty()) {
    absl::StrAppend(out, "made by ", made, "\n");
  }
  const GroupReport& total = experiment.total();
  if (total.simulated_trajectories() > 0) {
    absl::StrAppend(out, "SIMULATED: ", total.simulated_trajectories(), " of ",
                    total.trajectories(),
                    " trajectories have simulated results (not real model answers or "
                    "measurements)\n");
  }
  if (total.scripted_turns() > 0) {
    absl::StrAppend(out, "SCRIPTED answers: ", total.scripted_turns(), " of ", total.model_calls(),
                    " model answers came from a scripted model\n");
  }
  if (experiment.eval_mode() == v1::COMPILE_ONLY) {
    absl::StrAppend(out,
                    "compile-only: kernels were built, never run; none can be correct or "
                    "timed\n");
  }
}

std::string States(const GroupReport& group) {
  std::vector<std::string> states;
  for (int state = v1::TrajectoryState_MIN + 1; state <= v1::TrajectoryState_MAX; ++state) {
    const std::string name = v1::TrajectoryState_Name(state);
    const auto it = group.by_state().find(name);
    if (it != group.by_state().end() && it->second > 0) {
      states.push_back(absl::StrCat(name, " ", it->second));
    }
  }
  return absl::StrJoin(states, ", ");
}

std::string Histogram(const GroupReport& group) {
  std::vector<std::string> bins;
  for (const v1::SpeedupBin& bin : group.speedup_histogram()) {
    if (bin.count() == 0) continue;
    const std::string hi = bin.hi() > 0 ? absl::StrFormat("%.3g", bin.hi()) : "inf";
    bins.push_back(absl::StrFormat("[%.3g, %s): %d", bin.lo(), hi, bin.count()));
  }
  return bins.empty() ? "-" : absl::StrJoin(bins, "  ");
}

void AppendTotal(const GroupReport& total, std::string* out) {
  const std::string states = States(total);
  absl::StrAppend(out, "\ntotal: ", total.trajectories(), " trajectories, ", total.finished(),
                  " finished", states.empty() ? "" : "; ", states, "\n");
  AppendLine("correct",
             absl::StrCat(total.correct(), " (", Percent(total.correct_rate()), "), target met ",
                          total.target_met(), " (", Percent(total.target_met_rate()), "), rescued ",
                          total.rescued(), " of ", total.first_turn_failed(),
                          " failed first turns (", Percent(total.rescue_rate()), ")"),
             out);
  AppendLine("fallbacks", FallbackSummary(total), out);
  if (total.held_out_trajectories() > 0) {
    AppendLine("held out",
               absl::StrCat(total.held_out_trajectories(), " trajectories hold workloads out; "
                            "correct on the shown ones ", total.correct_on_shown(), " (",
                            Percent(total.correct_on_shown_rate()), "), found out ",
                            total.found_out(), " (", Percent(total.found_out_rate()), ")"),
               out);
  }
  std::vector<std::string> cells;
  for (const v1::PassAtTurn& pass : total.pass_at_turn()) {
    cells.push_back(absl::StrCat(pass.turn(), ": ", Percent(pass.rate())));
  }
  AppendCells("pass@turn", cells, out);
  cells.clear();
  for (const v1::FastP& fast : total.fast_p()) {
    cells.push_back(absl::StrFormat(">%g: %d (%s)", fast.p(), fast.count(), Percent(fast.rate())));
  }
  AppendCells("fast_p", cells, out);
  AppendLine("speedups",
             absl::StrCat(total.speedup_count(), " timed correct kernels (the best of each ",
                          "trajectory): geomean ", FormatSpeedup(total.geomean_speedup()),
                          ", best ", FormatSpeedup(total.best_speedup())),
             out);
  AppendLine("histogram", Histogram(total), out);
  AppendLine("roofline",
             total.roofline_count() == 0
                 ? "-"
                 : absl::StrCat(Percent(total.roofline_fraction()), " (mean of the ",
                                total.roofline_count(), " best kernels with a roofline)"),
             out);
  const v1::Usage& tokens = total.tokens();
  AppendLine("cost",
             absl::StrCat(FormatCost(total.cost_usd()), ", ",
                          total.correct() > 0 ? FormatCost(total.cost_per_correct_usd()) : "-",
                          " per correct; tokens ", tokens.input_tokens(), " in, ",
                          tokens.output_tokens(), " out, ", tokens.reasoning_tokens(),
                          " reasoning, ", tokens.cached_tokens(), " cached"),
             out);
  AppendLine("calls",
             absl::StrCat(total.model_calls(), " model calls (p50/p95 ",
                          P50P95(total.model_latency_ms()), "), ", total.evaluations(),
                          " evaluations (p50/p95 ", P50P95(total.eval_time_ms()), ")"),
             out);
}

// The total's outcomes by turn, turns 1-based as in pass@turn; classes that
// no turn has are left out, so that a compile-only run shows its few.
void AppendOutcomes(const GroupReport& total, std::string* out) {
  if (total.outcomes_by_turn().empty()) return;
  std::vector<const char*> shown;
  for (const char* name : kOutcomeClasses) {
    for (const v1::TurnOutcomes& turn : total.outcomes_by_turn()) {
      const auto it = turn.classes().find(name);
      if (it != turn.classes().end() && it->second > 0) {
        shown.push_back(name);
        break;
      }
    }
  }
  std::vector<std::string> headers = {"turn"};
  headers.insert(headers.end(), shown.begin(), shown.end());
  Table table(headers);
  for (size_t c = 0; c < headers.size(); ++c) table.AlignRight(c);
  for (const v1::TurnOutcomes& turn : total.outcomes_by_turn()) {
    std::vector<std::string> row = {absl::StrCat(turn.turn() + 1)};
    for (const char* name : shown) {
      const auto it = turn.classes().find(name);
      row.push_back(absl::StrCat(it == turn.classes().end() ? 0 : it->second));
    }
    table.AddRow(std::move(row));
  }
  absl::StrAppend(out, "\noutcomes by turn\n", table.Render());
}

// The columns of a grouping's table after its dimensions, chosen to fit 120
// columns: "correct" is also pass@T, so pass@T has no column of its own, and
// the cost of a group is left to the total and the CSV ($/correct compares).
const std::vector<std::string>& MetricHeaders() {
  static const auto* const kHeaders = new std::vector<std::string>{
      "done/N",  "correct",   "pass@1",       "target",      "fast_1", "geomean",
      "rescued", "$/correct", "model p50/95", "eval p50/95", ""};
  return *kHeaders;
}

std::vector<std::string> MetricCells(const GroupReport& group) {
  const v1::FastP* fast_1 = FindFastP(group, 1.0);
  return {absl::StrCat(group.finished(), "/", group.trajectories()),
          Percent(group.correct_rate()),
          Percent(PassAt1(group)),
          Percent(group.target_met_rate()),
          fast_1 == nullptr ? "-" : Percent(fast_1->rate()),
          FormatSpeedup(group.geomean_speedup()),
          absl::StrCat(group.rescued(), "/", group.first_turn_failed()),
          group.correct() > 0 ? FormatCost(group.cost_per_correct_usd()) : "-",
          P50P95(group.model_latency_ms()),
          P50P95(group.eval_time_ms()),
          Labels(group)};
}

// The fallback figures of a grouping's groups (docs/REPORTS.md,
// "Fallbacks"), a table of their own so that the main one keeps to 120
// columns; shown only where the experiment has a fallback-correct turn.
void AppendFallbacks(const v1::GroupingReport& grouping, std::string* out) {
  Table table = GroupingTable(
      grouping.by(), {"N", "correct", "by checks", "fallback turns", "fallback share"});
  for (const GroupReport& group : grouping.groups()) {
    std::vector<std::string> row = ShownKey(group, grouping.by());
    row.push_back(absl::StrCat(group.trajectories()));
    row.push_back(Percent(group.correct_rate()));
    row.push_back(Percent(group.correct_by_checks_rate()));
    row.push_back(absl::StrCat(group.fallback_correct_turns(), "/",
                               group.fallback_correct_turns() + group.passed_turns()));
    row.push_back(Percent(group.fallback_share()));
    table.AddRow(std::move(row));
  }
  absl::StrAppend(out, "\nfallbacks by ", absl::StrJoin(grouping.by(), " and "), "\n",
                  table.Render());
}

void AppendGrouping(const v1::GroupingReport& grouping, std::string* out) {
  std::vector<std::string> headers(grouping.by().begin(), grouping.by().end());
  const size_t dimensions = headers.size();
  headers.insert(headers.end(), MetricHeaders().begin(), MetricHeaders().end());
  Table table(headers);
  // Numbers right, labels (the last column) left.
  for (size_t c = dimensions; c + 1 < headers.size(); ++c) table.AlignRight(c);
  for (const GroupReport& group : grouping.groups()) {
    std::vector<std::string> row;
    for (const std::string& value : KeyValues(group, grouping.by())) {
      row.push_back(ShownValue(value));
    }
    for (std::string& cell : MetricCells(group)) row.push_back(std::move(cell));
    table.AddRow(std::move(row));
  }
  absl::StrAppend(out, "\nby ", absl::StrJoin(grouping.by(), " and "), "\n", table.Render());
}

}  // namespace

std::string ReportTable(const v1::ReportResponse& response) {
  std::string out;
  for (const ExperimentReport& experiment : response.experiments()) {
    if (!out.empty()) out += "\n";
    AppendHeader(experiment, &out);
    AppendTotal(experiment.total(), &out);
    AppendScoreLines(experiment.total(), &out);
    AppendVarianceLine(experiment, &out);
    // The scores' tables only where a correct kernel was timed: a
    // compile-only or all-failed experiment has nothing to show in them.
    const bool scored = experiment.total().timed_correct_turns() > 0;
    for (const v1::GroupingReport& grouping : experiment.groupings()) {
      AppendGrouping(grouping, &out);
      if (experiment.total().fallback_correct_turns() > 0) AppendFallbacks(grouping, &out);
      if (scored) AppendScoreTable(grouping, &out);
    }
    AppendOutcomes(experiment.total(), &out);
    AppendRescueByTurn(experiment.total(), &out);
  }
  if (response.experiments_size() >= 2) AppendComparison(response, &out);
  absl::StrAppend(&out,
                  "\ncorrect: a PASSED kernel at some turn (= pass@T); pass@1: at the first "
                  "turn; target: SUBMITTED;\nfast_1: correct and faster than the reference; "
                  "geomean: of each trajectory's best correct kernel;\nrescued: correct later, "
                  "of those whose first turn failed; p50/95: wall time of model calls and "
                  "evaluations;\nby checks: correct, or a library fallback whose outputs passed "
                  "the checks; fallback share: of turns correct by checks;\n"
                  "wtd roofline, SOL-Score: importance-weighted means over trajectories "
                  "(no correct kernel: 0);\nslower than ref: correct timed turns with "
                  "speedup < 1; persistent / rescued: correct turns\nafter no failed turn / "
                  "after one\n"
                  "metrics: ",
                  response.metrics_version().empty() ? kMetricsVersion : response.metrics_version(),
                  " (docs/REPORTS.md)\n");
  return out;
}

}  // namespace ptxbench::report
