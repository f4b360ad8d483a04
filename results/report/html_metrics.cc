#include "results/report/html_metrics.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "results/report/html_table.h"
#include "results/report/svg.h"

namespace ptxbench::report::html {
namespace {

using ::ptxbench::v1::ExperimentReport;
using ::ptxbench::v1::GroupReport;

const ptxbench::v1::FastP* FastAt(const GroupReport& g, double p) {
  for (const auto& f : g.fast_p()) {
    if (std::fabs(f.p() - p) < 1e-9) return &f;
  }
  return nullptr;
}

std::string PassAt(const GroupReport& g, int turn) {
  for (const auto& p : g.pass_at_turn()) {
    if (p.turn() == turn) return FormatPercent(p.rate());
  }
  return "—";
}

// "p50 / p95"
std::string Latencies(const ptxbench::v1::Percentiles& p) {
  if (p.count() == 0) return "—";
  return absl::StrCat(FormatMs(p.p50(), p.count()), " / ", FormatMs(p.p95(), p.count()));
}

// One row: the key's values (or "all"), then the numbers.
std::vector<Cell> Row(const GroupReport& g, const std::vector<std::string>& by, int last_turn,
                      bool with_fast_1) {
  std::vector<Cell> row = KeyCells(g, by);
  row.push_back({FormatCount(g.trajectories())});
  row.push_back({RateAndCount(g.correct_rate(), g.correct())});
  row.push_back({RateAndCount(g.correct_by_checks_rate(), g.correct_by_checks())});
  row.push_back({FormatPercent(g.fallback_share())});
  row.push_back({PassAt(g, 1)});
  if (last_turn > 1) row.push_back({PassAt(g, last_turn)});
  row.push_back({FormatPercent(g.target_met_rate())});
  if (with_fast_1) {
    const auto* f = FastAt(g, 1.0);
    row.push_back({f ? FormatPercent(f->rate()) : "—"});
  }
  row.push_back({FormatSpeedup(g.geomean_speedup(), g.speedup_count())});
  row.push_back({FormatSpeedup(g.best_speedup(), g.speedup_count())});
  row.push_back(
      {absl::StrCat(FormatCount(g.rescued()), " / ", FormatCount(g.first_turn_failed()))});
  row.push_back({FormatUsd(g.cost_usd())});
  row.push_back({g.correct() > 0 ? FormatUsd(g.cost_per_correct_usd()) : "—"});
  row.push_back(Latencies(g.model_latency_ms()));
  row.push_back(Latencies(g.eval_time_ms()));
  return row;
}

std::string MetricsTable(const ExperimentReport& e, const std::vector<std::string>& by,
                         const std::vector<const GroupReport*>& groups, bool with_fast_1) {
  int last_turn = 1;
  for (const auto& p : e.total().pass_at_turn()) last_turn = std::max(last_turn, p.turn());
  for (const GroupReport* g : groups) {
    for (const auto& p : g->pass_at_turn()) last_turn = std::max(last_turn, p.turn());
  }
  Table table;
  table.css = "metrics";
  table.key_columns = std::max<size_t>(1, by.size());
  table.header = by.empty() ? std::vector<std::string>{"trajectories of"} : by;
  table.header.insert(table.header.end(),
                      {"n", "correct", "correct by checks", "fallback share", "pass@1"});
  if (last_turn > 1) table.header.push_back(absl::StrCat("pass@", last_turn));
  table.header.push_back("target met");
  if (with_fast_1) table.header.push_back("fast_1");
  table.header.insert(table.header.end(), {"geomean speedup", "best speedup", "rescued", "cost",
                                           "$ / correct", "model p50 / p95", "eval p50 / p95"});
  for (const GroupReport* g : groups) table.rows.push_back(Row(*g, by, last_turn, with_fast_1));
  table.total_from = table.rows.size();
  table.rows.push_back(Row(e.total(), by, last_turn, with_fast_1));
  return RenderTable(table);
}

}  // namespace

std::string MetricsSection(const ExperimentReport& e, const ptxbench::v1::ReportResponse& report,
                           bool titled) {
  bool with_fast_1 =
      FastAt(e.total(), 1.0) != nullptr ||
      std::any_of(report.fast_p_thresholds().begin(), report.fast_p_thresholds().end(),
                  [](double p) { return std::fabs(p - 1.0) < 1e-9; });
  std::string out = "<section class=\"metrics\">";
  if (titled) {
    absl::StrAppend(&out, "<h3>", EscapeHtml(ExperimentName(e)), "</h3>");
  }
  if (e.groupings().empty()) {
    absl::StrAppend(&out, "<h4>All trajectories</h4>", MetricsTable(e, {}, {}, with_fast_1));
  }
  for (const auto& grouping : e.groupings()) {
    std::vector<std::string> by(grouping.by().begin(), grouping.by().end());
    std::vector<const GroupReport*> groups;
    for (const GroupReport& g : grouping.groups()) groups.push_back(&g);
    absl::StrAppend(&out, "<h4>By ", EscapeHtml(absl::StrJoin(by, " and ")), "</h4>",
                    MetricsTable(e, by, groups, with_fast_1));
  }
  absl::StrAppend(&out,
                  "<p class=\"meta\">n: trajectories. Correct: a PASSED kernel, library "
                  "fallbacks excluded. Correct by checks: PASSED, or a library fallback whose "
                  "outputs passed the checks. Fallback share: of the turns correct by checks, "
                  "the library fallbacks. pass@t: a correct kernel at a turn ≤ t. "
                  "Rescued: trajectories "
                  "whose first turn failed and a later one was correct, of those whose first turn "
                  "failed. Latencies: nearest-rank percentiles of each model call and each "
                  "evaluation.</p></section>");
  return out;
}

}  // namespace ptxbench::report::html
