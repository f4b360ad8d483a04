#include "results/report/html.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "results/report/testing/markup.h"
#include "results/report/testing/sample_report.h"
#include "results/report/testing/trajectories.h"

namespace ptxbench::report {
namespace {

using ::ptxbench::v1::ReportResponse;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Occurrences;
using testing::TagBalance;

int Plots(const std::string& html) { return Occurrences(html, "<svg class=\"plot\""); }

TEST(TagBalanceTest, FindsWhatIsNotClosed) {
  EXPECT_EQ(TagBalance("<div><p>a</p><meta charset=x><rect/></div>"), "");
  EXPECT_THAT(TagBalance("<div><svg></div>"), HasSubstr("</div> closes <svg>"));
  EXPECT_THAT(TagBalance("<figure>"), HasSubstr("<figure> never closed"));
  EXPECT_EQ(TagBalance("<style>a > b { }</style>"), "");
}

TEST(ReportHtmlTest, OnePageWithEveryPlotClosed) {
  const std::string html = ReportHtml(testing::SampleReport());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0), 0u);
  EXPECT_EQ(TagBalance(html), "");
  // pass@turn per model and per tag, fast_p, speedups, outcomes, cost.
  EXPECT_EQ(Plots(html), 6);
  EXPECT_EQ(Occurrences(html, "<svg"), Occurrences(html, "</svg>"));
  EXPECT_EQ(Occurrences(html, "<figure"), 6);
  // Each plot has a size and an accessible title, first thing inside it.
  for (size_t at = html.find("<svg class=\"plot\""); at != std::string::npos;
       at = html.find("<svg class=\"plot\"", at + 1)) {
    const std::string open = html.substr(at, html.find('>', at) - at);
    EXPECT_THAT(open, HasSubstr("viewBox=\"0 0 "));
    EXPECT_THAT(open, HasSubstr(" width=\""));
    EXPECT_EQ(html.compare(html.find('>', at) + 1, 7, "<title>"), 0) << open;
  }
  // A table of numbers in every figure, and one per grouping.
  EXPECT_EQ(Occurrences(html, "<table>"), 6);
  EXPECT_EQ(Occurrences(html, "<table class=\"metrics\">"), 3);
}

TEST(ReportHtmlTest, NoScriptAndNothingFromANetwork) {
  const std::string html = absl::AsciiStrToLower(ReportHtml(testing::ComparisonReport()));
  for (const char* banned : {"<script", "javascript:", "http:", "https:", "url(", "@import"}) {
    EXPECT_THAT(html, Not(HasSubstr(banned)));
  }
  EXPECT_THAT(html, Not(::testing::ContainsRegex(" on[a-z]+=")));  // event handlers
  EXPECT_THAT(html, HasSubstr("content=\"default-src 'none'; style-src 'unsafe-inline'\""));
  EXPECT_THAT(html, HasSubstr("@media print"));
  EXPECT_THAT(html, HasSubstr("break-inside: avoid"));
}

TEST(ReportHtmlTest, NamesFromUsersComeOutInert) {
  testing::SampleOptions o;
  o.name = "exp <b>&amp;</b>";
  o.id = "id\"onmouseover=\"x";
  o.models = {"<script>alert(1)</script>", "m'"};
  o.tags = {"\"><img src=x onerror=alert(2)>", std::string("t\x01\x1b", 3)};
  const std::string html = ReportHtml(testing::SampleResponse({testing::SampleExperiment(o)}));
  for (const char* raw : {"<script", "<img", "<b>", "\"onmouseover", "\x01", "m'"}) {
    EXPECT_THAT(html, Not(HasSubstr(raw)));
  }
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, HasSubstr("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"));
  EXPECT_THAT(html, HasSubstr("exp &lt;b&gt;&amp;amp;&lt;/b&gt;"));
  EXPECT_EQ(TagBalance(html), "");
  EXPECT_EQ(Plots(html), 6);
}

TEST(ReportHtmlTest, NothingSimulatedNoBanner) {
  const std::string html = ReportHtml(testing::SampleReport());
  EXPECT_THAT(html, Not(HasSubstr("SIMULATED")));
  EXPECT_THAT(html, Not(HasSubstr("class=\"banner")));
}

TEST(ReportHtmlTest, SimulatedIsLabelledEverywhere) {
  const std::string html = ReportHtml(testing::SimulatedReport());
  EXPECT_THAT(html, HasSubstr("<div class=\"banner simulated\" role=\"alert\"><p><strong>SIMULATED "
                              "results</strong> in smoke-simulated: 160 of 160 trajectories"));
  // The plot titles, the legends and the tables' rows.
  EXPECT_THAT(html, HasSubstr("<title>Pass@turn per model — includes SIMULATED</title>"));
  EXPECT_THAT(html, HasSubstr("<title>Outcomes by turn — includes SIMULATED</title>"));
  EXPECT_THAT(html, HasSubstr(">gpt-4.1 (simulated)</text>"));
  EXPECT_EQ(Occurrences(html, "<span class=\"badge\">SIMULATED</span>"),
            // figures: 2 + 2 + 2 + 2 + 1 (outcomes' all) + 4; metrics: (2+1) + (2+1) + (4+1);
            // scores: the metrics' rows again
            13 + 11 + 11);
}

TEST(ReportHtmlTest, ComparisonOverlaysTheExperiments) {
  const std::string html = ReportHtml(testing::ComparisonReport());
  EXPECT_EQ(TagBalance(html), "");
  // One outcomes plot per experiment; the rest overlay them.
  EXPECT_EQ(Plots(html), 7);
  EXPECT_THAT(html, HasSubstr("<h1>gemm-sweep vs gemm-sweep-sim</h1>"));
  EXPECT_THAT(html, HasSubstr(">gemm-sweep / gpt-4.1</text>"));
  EXPECT_THAT(html, HasSubstr(">gemm-sweep-sim / gpt-4.1 (simulated)</text>"));
  EXPECT_THAT(html,
              HasSubstr(">gemm-sweep-sim / quickstart-scripted (simulated, scripted)</text>"));
  EXPECT_THAT(html, HasSubstr("<strong>Scripted answers</strong> in gemm-sweep-sim"));
  EXPECT_THAT(html, HasSubstr("<title>Outcomes by turn — gemm-sweep</title>"));
  EXPECT_THAT(html, HasSubstr("<title>Outcomes by turn — gemm-sweep-sim — includes SIMULATED, "
                              "scripted</title>"));
  // The same model keeps its colour; the second experiment is dashed.
  EXPECT_THAT(html, HasSubstr("stroke-dasharray=\"7 4\""));
}

TEST(ReportHtmlTest, AMissingGroupingIsNamed) {
  ReportResponse report = testing::SampleReport();
  // Keep ["model"] only.
  report.mutable_experiments(0)->mutable_groupings()->DeleteSubrange(1, 2);
  std::string html = ReportHtml(report);
  EXPECT_EQ(TagBalance(html), "");
  EXPECT_THAT(html, HasSubstr("Not shown: the report has no grouping [&quot;tag&quot;]"));
  // Cost falls back on ["model"] alone.
  EXPECT_THAT(html, HasSubstr("one point per model."));
  EXPECT_EQ(Plots(html), 5);

  report.mutable_experiments(0)->clear_groupings();
  html = ReportHtml(report);
  EXPECT_EQ(TagBalance(html), "");
  EXPECT_THAT(html, HasSubstr("no grouping [&quot;model&quot;]"));
  EXPECT_THAT(html, HasSubstr("no grouping [&quot;model&quot;, &quot;tag&quot;]"));
  // Speedups fall back on the total; outcomes need only the total.
  EXPECT_EQ(Plots(html), 2);
  EXPECT_THAT(html, HasSubstr("<h4>All trajectories</h4>"));
}

TEST(ReportHtmlTest, APartlyMissingGroupingNamesTheExperiment) {
  ReportResponse report = testing::ComparisonReport();
  report.mutable_experiments(1)->mutable_groupings()->DeleteSubrange(1, 1);  // its ["tag"]
  const std::string html = ReportHtml(report);
  EXPECT_THAT(html, HasSubstr("Not shown for gemm-sweep-sim: the report has no grouping "
                              "[&quot;tag&quot;]"));
  EXPECT_EQ(Plots(html), 7);
}

TEST(ReportHtmlTest, TheNumbersAreInTheTables) {
  const ReportResponse report = testing::SampleReport();
  const std::string html = ReportHtml(report);
  const auto& total = report.experiments(0).total();
  ASSERT_EQ(total.trajectories(), 160);
  ASSERT_EQ(total.correct(), 112);
  EXPECT_THAT(html, HasSubstr("<td>70.0% (112)</td>"));
  EXPECT_THAT(html, HasSubstr("<td>$7.88</td>"));
  // pass@1 of gpt-4.1 (27 of 80) in its figure's table and its metrics row.
  EXPECT_GE(Occurrences(html, "<td>33.8%</td>"), 2);
  // The speedups' bins and the outcome classes.
  EXPECT_THAT(html, HasSubstr("<th>1–1.5×</th>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"k\">compile error</span>"));
  // Latencies as p50 / p95.
  EXPECT_THAT(html, HasSubstr("<td>17.0 s / 46.0 s</td>"));
  // The footer: the definitions and when.
  EXPECT_THAT(html, HasSubstr("<code>ptxbench.metrics.v3</code>, each with its formula in "
                              "<code>docs/REPORTS.md</code>"));
  EXPECT_THAT(html, HasSubstr("Generated 2025-06-01 12:00:00 UTC"));
  EXPECT_THAT(html, HasSubstr("fast_p at p = 0, 0.5, 0.8, 1, 1.5, 2."));
}

// The scores (docs/REPORTS.md, "Scores"), worked out in scores_test.cc.
TEST(ReportHtmlTest, TheScoresAndTheVarianceAreShown) {
  ReportResponse report;
  *report.add_experiments() =
      fixtures::Build(fixtures::ScoreTrajectories(), {{"model"}, {"category"}});
  report.mutable_experiments(0)->set_name("scored");
  const std::string html = ReportHtml(report);
  EXPECT_EQ(TagBalance(html), "");
  EXPECT_THAT(html, HasSubstr("<h2>Scores</h2>"));
  EXPECT_THAT(html, HasSubstr("<th>SOL-Score</th>"));
  EXPECT_THAT(html, HasSubstr("<h4>Scores by category</h4>"));
  // The total: weighted roofline 0.317 and SOL-Score 0.442 of 3
  // trajectories, 2 of 4 correct timed turns slower than the reference.
  EXPECT_THAT(html, HasSubstr("<td>0.317 (3)</td><td>0.442 (3)</td><td>50.0% of 4</td>"));
  EXPECT_THAT(html, HasSubstr("<td>1.73× (2)</td><td>0.63× (2)</td>"));
  // gemm: (3 * 0.5) / 5 and (3 * 0.75) / 5.
  EXPECT_THAT(html, HasSubstr("<td>0.300 (2)</td><td>0.450 (2)</td>"));
  EXPECT_THAT(html, HasSubstr("Variance in correctness explained: by category <strong>38.4%"
                              "</strong> (2 levels), by model <strong>38.4%</strong>"));
  EXPECT_THAT(html, HasSubstr("<h4>Correct turns' speedups by turn</h4>"));
}

TEST(ReportHtmlTest, CompileOnlySaysNothingWasTimed) {
  testing::SampleOptions o;
  o.eval_mode = ptxbench::v1::COMPILE_ONLY;
  const std::string html = ReportHtml(testing::SampleResponse({testing::SampleExperiment(o)}));
  EXPECT_THAT(html, HasSubstr("<strong>Compile-only</strong> evaluation in gemm-sweep"));
  EXPECT_THAT(html, HasSubstr("compile-only (nothing run or timed)"));
}

TEST(ReportHtmlTest, EmptyAndBrokenReportsStillRender) {
  EXPECT_EQ(TagBalance(ReportHtml(ReportResponse())), "");
  EXPECT_THAT(ReportHtml(ReportResponse()), HasSubstr("<h1>no experiment</h1>"));

  ReportResponse empty;
  empty.add_experiments()->set_experiment_id("exp-empty");
  std::string html = ReportHtml(empty);
  EXPECT_EQ(TagBalance(html), "");
  EXPECT_THAT(html, HasSubstr("No turn has an outcome yet."));

  // Rates that are not numbers, an unknown outcome class, no thresholds.
  ReportResponse odd = testing::SampleReport();
  odd.clear_fast_p_thresholds();
  auto* total = odd.mutable_experiments(0)->mutable_total();
  total->set_correct_rate(NAN);
  total->mutable_pass_at_turn(0)->set_rate(INFINITY);
  (*total->mutable_outcomes_by_turn(0)->mutable_classes())["brand_new_class"] = 3;
  auto* group = odd.mutable_experiments(0)->mutable_groupings(0)->mutable_groups(0);
  group->mutable_fast_p(0)->set_rate(-INFINITY);
  group->set_cost_usd(NAN);
  html = ReportHtml(odd);
  EXPECT_EQ(TagBalance(html), "");
  EXPECT_EQ(Plots(html), 6);
  EXPECT_THAT(html, HasSubstr("<span class=\"k\">brand new class</span>"));
  EXPECT_THAT(absl::AsciiStrToLower(html), Not(::testing::ContainsRegex("[^a-z](nan|inf)[^a-z]")));
}

TEST(ReportHtmlTest, TheHeldOutFiguresAreShownWhereWorkloadsAreHeldOut) {
  ReportResponse report = testing::SampleReport();
  EXPECT_THAT(ReportHtml(report), Not(HasSubstr("found out by held-out")));
  v1::GroupReport& total = *report.mutable_experiments(0)->mutable_total();
  total.set_held_out_trajectories(8);
  total.set_correct_on_shown(6);
  total.set_correct_on_shown_rate(0.75);
  total.set_found_out(2);
  total.set_found_out_rate(0.25);
  const std::string html = ReportHtml(report);
  EXPECT_THAT(html, HasSubstr("<dt>correct on shown workloads</dt><dd>75.0% (6)</dd>"));
  EXPECT_THAT(html, HasSubstr("<dt>found out by held-out</dt><dd>25.0% (2)</dd>"));
  EXPECT_EQ(TagBalance(html), "");
}

TEST(ReportHtmlTest, TheLanguageAndTheFallbackFiguresAreShown) {
  ReportResponse report = testing::SampleReport();
  v1::ExperimentReport& e = *report.mutable_experiments(0);
  e.set_language("triton");
  e.mutable_total()->set_correct_by_checks(7);
  e.mutable_total()->set_correct_by_checks_rate(0.875);
  e.mutable_total()->set_passed_turns(3);
  e.mutable_total()->set_fallback_correct_turns(1);
  e.mutable_total()->set_fallback_share(0.25);
  const std::string html = ReportHtml(report);
  EXPECT_THAT(html, HasSubstr("<dt>language</dt><dd>triton</dd>"));
  EXPECT_THAT(html, HasSubstr("<dt>correct by checks</dt><dd>87.5% (7)</dd>"));
  EXPECT_THAT(html, HasSubstr("<dt>fallback share</dt><dd>25.0% of 4 turns correct by checks</dd>"));
  EXPECT_THAT(html, HasSubstr("<th>fallback share</th>"));
  EXPECT_EQ(TagBalance(html), "");
}

}  // namespace
}  // namespace ptxbench::report
