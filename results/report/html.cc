#include "results/report/html.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "results/report/html_figures.h"
#include "results/report/html_metrics.h"
#include "results/report/html_scores.h"
#include "results/report/html_style.h"
#include "results/report/html_table.h"
#include "results/report/svg.h"

namespace ptxbench::report {
namespace {

using ::ptxbench::v1::ExperimentReport;
using ::ptxbench::v1::GroupReport;
using ::ptxbench::v1::ReportResponse;

// The page allows nothing but its own inline styles: no script runs even if
// a name slipped through unescaped, and nothing is fetched from a network.
constexpr char kHead[] = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="ptxbench">
)";

// `simulated`: some results came from a simulated worker, which checks and
// times nothing, whatever the mode says.
std::string EvalModeText(ptxbench::v1::EvalMode mode, bool simulated) {
  switch (mode) {
    case ptxbench::v1::FULL:
      return simulated ? "full, SIMULATED (nothing was checked or timed)"
                       : "full (checked and timed on a GPU)";
    case ptxbench::v1::COMPILE_ONLY:
      return "compile-only (nothing run or timed)";
    default:
      return "unspecified";
  }
}

// The largest simulated and scripted counts of any of the experiment's
// groups (the total's, unless the report is inconsistent).
struct Provenance {
  int64_t simulated = 0;
  int64_t scripted = 0;
};

Provenance ProvenanceOf(const ExperimentReport& e) {
  Provenance p{e.total().simulated_trajectories(), e.total().scripted_turns()};
  for (const auto& grouping : e.groupings()) {
    for (const GroupReport& g : grouping.groups()) {
      p.simulated = std::max(p.simulated, g.simulated_trajectories());
      p.scripted = std::max(p.scripted, g.scripted_turns());
    }
  }
  return p;
}

std::string Banners(const ExperimentReport& e) {
  const Provenance p = ProvenanceOf(e);
  const std::string name = EscapeHtml(html::ExperimentName(e));
  std::string out;
  if (p.simulated > 0) {
    absl::StrAppend(
        &out,
        "<div class=\"banner simulated\" role=\"alert\"><p><strong>SIMULATED results"
        "</strong> in ",
        name, ": ", html::FormatCount(p.simulated), " of ",
        html::FormatCount(e.total().trajectories()),
        " trajectories had a simulated answer or evaluation. These numbers measure "
        "no model and no GPU; every series and row with them is marked SIMULATED.</p></div>");
  }
  if (p.scripted > 0) {
    absl::StrAppend(&out,
                    "<div class=\"banner scripted\" role=\"alert\"><p><strong>Scripted answers"
                    "</strong> in ",
                    name, ": ", html::FormatCount(p.scripted),
                    " turns were answered from a scripted model (prepared answers, not a language "
                    "model); every series and row with them is marked scripted.</p></div>");
  }
  if (e.eval_mode() == ptxbench::v1::COMPILE_ONLY) {
    absl::StrAppend(
        &out, "<div class=\"banner info\"><p><strong>Compile-only</strong> evaluation in ", name,
        ": kernels were built and their resources read, but nothing was run, "
        "checked or timed; there are no correct kernels and no speedups.</p></div>");
  }
  return out;
}

std::string Card(const ExperimentReport& e) {
  const GroupReport& t = e.total();
  auto row = [](absl::string_view term, const std::string& value) {
    return absl::StrCat("<dt>", term, "</dt><dd>", EscapeHtml(value), "</dd>");
  };
  return absl::StrCat(
      "<div class=\"card\"><h3>", EscapeHtml(html::ExperimentName(e)), "</h3><dl>",
      "<dt>id</dt><dd><code>", EscapeHtml(e.experiment_id()), "</code></dd>",
      row("evaluation", EvalModeText(e.eval_mode(), t.simulated_trajectories() > 0)),
      e.language().empty() ? "" : row("language", e.language()),
      row("trajectories", absl::StrCat(html::FormatCount(t.trajectories()), " (",
                                       html::FormatCount(t.finished()), " finished)")),
      row("correct", html::RateAndCount(t.correct_rate(), t.correct())),
      row("correct by checks", html::RateAndCount(t.correct_by_checks_rate(), t.correct_by_checks())),
      row("fallback share", absl::StrCat(html::FormatPercent(t.fallback_share()), " of ",
                                         html::FormatCount(t.fallback_correct_turns() +
                                                           t.passed_turns()),
                                         " turns correct by checks")),
      t.held_out_trajectories() == 0
          ? ""
          : absl::StrCat(
                row("correct on shown workloads",
                    html::RateAndCount(t.correct_on_shown_rate(), t.correct_on_shown())),
                row("found out by held-out", html::RateAndCount(t.found_out_rate(), t.found_out()))),
      row("target met", html::RateAndCount(t.target_met_rate(), t.target_met())),
      row("geomean speedup", html::FormatSpeedup(t.geomean_speedup(), t.speedup_count())),
      row("cost", absl::StrCat(html::FormatUsd(t.cost_usd()), " over ",
                               html::FormatCount(t.model_calls()), " model calls")),
      "</dl></div>");
}

std::string Title(const ReportResponse& report) {
  std::vector<std::string> names;
  for (const ExperimentReport& e : report.experiments()) names.push_back(html::ExperimentName(e));
  if (names.empty()) return "no experiment";
  if (names.size() <= 3) return absl::StrJoin(names, " vs ");
  return absl::StrCat(names.size(), " experiments");
}

std::string Footer(const ReportResponse& report) {
  std::string generated =
      absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixMillis(report.generated_unix_ms()),
                       absl::UTCTimeZone());
  std::vector<std::string> ps;
  for (double p : report.fast_p_thresholds()) ps.push_back(absl::StrFormat("%g", p));
  return absl::StrCat(
      "<footer><p>Metric definitions: <code>",
      EscapeHtml(report.metrics_version().empty() ? "unversioned" : report.metrics_version()),
      "</code>, each with its formula in <code>docs/REPORTS.md</code> of ptxbench. fast_p at p = ",
      EscapeHtml(ps.empty() ? "—" : absl::StrJoin(ps, ", ")),
      ". Speedups are over the reference, a kernel's being the geometric mean over its "
      "workloads.</p><p>Generated ",
      generated,
      " by ptxbench from one snapshot of the database. Simulated results and scripted answers "
      "are marked wherever they appear.</p></footer>");
}

}  // namespace

const std::vector<std::vector<std::string>>& HtmlGroupings() {
  static const auto* groupings =
      new std::vector<std::vector<std::string>>{
          {"model"}, {"tag"}, {"model", "tag"}, {"category"}};
  return *groupings;
}

std::string ReportHtml(const ReportResponse& report) {
  const std::string title = Title(report);
  std::string out = absl::StrCat(kHead, "<title>ptxbench report: ", EscapeHtml(title), "</title>\n",
                                 kHtmlStyle, "</head>\n<body>\n<main>\n");
  absl::StrAppend(
      &out, "<header class=\"masthead\"><p class=\"kicker\">ptxbench report</p><h1>",
      EscapeHtml(title), "</h1><p class=\"meta\">", report.experiments_size(),
      report.experiments_size() == 1 ? " experiment" : " experiments", " · metrics <code>",
      EscapeHtml(report.metrics_version()), "</code> · generated ",
      absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::FromUnixMillis(report.generated_unix_ms()),
                       absl::UTCTimeZone()),
      "</p></header>\n");
  for (const ExperimentReport& e : report.experiments()) absl::StrAppend(&out, Banners(e));
  absl::StrAppend(&out, "<section class=\"cards\">");
  for (const ExperimentReport& e : report.experiments()) absl::StrAppend(&out, Card(e));
  absl::StrAppend(&out, "</section>\n<h2>Figures</h2>\n<section class=\"figures\">",
                  html::Figures(report), "</section>\n<h2>Metrics</h2>\n");
  for (const ExperimentReport& e : report.experiments()) {
    absl::StrAppend(&out, html::MetricsSection(e, report, report.experiments_size() > 1));
  }
  absl::StrAppend(&out, "<h2>Scores</h2>\n");
  for (const ExperimentReport& e : report.experiments()) {
    absl::StrAppend(&out, html::ScoresSection(e, report.experiments_size() > 1));
  }
  absl::StrAppend(&out, Footer(report), "\n</main>\n</body>\n</html>\n");
  return out;
}

}  // namespace ptxbench::report
