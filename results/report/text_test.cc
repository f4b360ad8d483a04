#include "results/report/text.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/proto_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "results/report/metrics.h"
#include "results/report/testing/trajectories.h"
#include "testing/csv.h"

namespace ptxbench::report {
namespace {

using fixtures::Evaluated;
using fixtures::FourTrajectories;
using fixtures::Passed;
using fixtures::Trajectory;
using ::testing::HasSubstr;
using ::testing::Not;

v1::ExperimentReport Experiment(const std::string& id, const std::string& name,
                                const std::vector<TrajectoryFacts>& trajectories,
                                std::vector<std::vector<std::string>> groupings) {
  v1::ExperimentReport experiment = fixtures::Build(trajectories, std::move(groupings));
  experiment.set_experiment_id(id);
  experiment.set_name(name);
  experiment.set_eval_mode(v1::FULL);
  return experiment;
}

v1::ReportResponse Response(std::vector<v1::ExperimentReport> experiments) {
  v1::ReportResponse response;
  for (auto& experiment : experiments) *response.add_experiments() = std::move(experiment);
  response.set_metrics_version(kMetricsVersion);
  for (double p : FastPThresholds()) response.add_fast_p_thresholds(p);
  return response;
}

// The four trajectories of results/report/testing/trajectories.h, where C and D
// are simulated and A and D have a scripted turn.
v1::ReportResponse FourResponse() {
  return Response({Experiment("exp_1", "run1", FourTrajectories(),
                              {{"model"}, {"tag"}, {"model", "tag"}, {"turn"}})});
}

// A second run of the same matrix: D is correct at its second turn (1.5x).
v1::ReportResponse TwoRuns() {
  std::vector<TrajectoryFacts> better = FourTrajectories();
  better[3].turns[1] = Passed(900, 80, 1.5);
  better[3].state = v1::SUBMITTED;
  return Response({Experiment("exp_1", "run1", FourTrajectories(), {{"model"}}),
                   Experiment("exp_2", "run2", better, {{"model"}})});
}

TEST(ReportTableTest, LabelsSimulatedAndScriptedResults) {
  const std::string table = ReportTable(FourResponse());
  EXPECT_THAT(table, HasSubstr("== experiment run1 (exp_1), eval mode full\n"));
  EXPECT_THAT(table, HasSubstr("SIMULATED: 2 of 4 trajectories have simulated results"));
  EXPECT_THAT(table, HasSubstr("SCRIPTED answers: 2 of 9 model answers"));
  // m2's row carries both labels, m1's (one scripted turn) one.
  EXPECT_THAT(table, ::testing::ContainsRegex("\nm2 .* SIM\\+SCRIPTED\n"));
  EXPECT_THAT(table, ::testing::ContainsRegex("\nm1 .* SCRIPTED\n"));
  EXPECT_THAT(table, HasSubstr("metrics: ptxbench.metrics.v3 (docs/REPORTS.md)\n"));

  const std::string clean = ReportTable(Response(
      {Experiment("exp_3", "clean", {Trajectory("m", "t", {}, v1::SUBMITTED, {Passed(1, 1, 2.0)})},
                  {{"model"}})}));
  EXPECT_THAT(clean, Not(HasSubstr("SIMULATED")));
  EXPECT_THAT(clean, Not(HasSubstr("SCRIPTED")));
}

TEST(ReportTableTest, ShowsTheTotalAndEveryGrouping) {
  const std::string table = ReportTable(FourResponse());
  EXPECT_THAT(table, HasSubstr("total: 4 trajectories, 3 finished; AWAITING_EVAL 1, "
                               "SUBMITTED 1, LIMITS_EXCEEDED 2\n"));
  EXPECT_THAT(table, HasSubstr("  pass@turn  1: 25.0%  2: 50.0%  3: 50.0%\n"));
  EXPECT_THAT(table, HasSubstr(">1: 1 (25.0%)  >1.5: 1 (25.0%)  >2: 0 (0.0%)\n"));
  EXPECT_THAT(table, HasSubstr("  histogram  [1, 1.41): 1  [2, 2.83): 1\n"));
  EXPECT_THAT(table, HasSubstr("\nby model\n"));
  EXPECT_THAT(table, HasSubstr("\nby model and tag\n"));
  EXPECT_THAT(table, HasSubstr("\nby turn\n"));
  // Outcomes by turn, 1-based; the classes no turn has (incorrect,
  // infra_error, ...) are left out.
  EXPECT_THAT(table, HasSubstr("\noutcomes by turn\nturn  passed  compile_error"));
  EXPECT_THAT(table, Not(HasSubstr("infra_error")));
  EXPECT_THAT(table, Not(HasSubstr("incorrect")));
  // About 120 columns: the widest line here (two key columns and both
  // labels) has 121.
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    EXPECT_LE(line.size(), 121u) << line;
  }
}

TEST(ReportTableTest, WrapsLongLinesAndSaysCompileOnly) {
  TrajectoryFacts trajectory =
      Trajectory("m", "t", {}, v1::LIMITS_EXCEEDED, {Evaluated(1, v1::COMPILED, 1)});
  trajectory.num_turns = 40;
  v1::ReportResponse response = Response({Experiment("exp_4", "", {trajectory}, {})});
  response.mutable_experiments(0)->set_eval_mode(v1::COMPILE_ONLY);
  const std::string table = ReportTable(response);
  // No name: the id stands for it.
  EXPECT_THAT(table, HasSubstr("== experiment exp_4 (exp_4), eval mode compile-only\n"
                               "compile-only: kernels were built, never run"));
  // pass@turn for 40 turns wraps under its first cell.
  EXPECT_THAT(table, HasSubstr("  pass@turn  1: 0.0%  2: 0.0%"));
  EXPECT_THAT(table, ::testing::ContainsRegex("\n             [0-9]+: 0.0%  "));
  EXPECT_THAT(table, HasSubstr("40: 0.0%\n"));
  EXPECT_THAT(table, HasSubstr("\noutcomes by turn\nturn  compiled\n   1         1\n"));
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    EXPECT_LE(line.size(), 120u) << line;
  }
}

TEST(ReportTableTest, ComparesWithTheFirstExperiment) {
  const std::string table = ReportTable(TwoRuns());
  EXPECT_THAT(table, HasSubstr("== comparison: differences from run1\n"));
  // Total: correct 50% -> 75% (+25 pp); geomean sqrt(2) -> (2 * 1 * 1.5)^(1/3)
  // = 1.442, x1.02; $/correct 0.045 -> 0.09 / 3 = 0.03, x0.67.
  EXPECT_THAT(table, ::testing::ContainsRegex("\nrun2 +4 +75.0% +\\+25.0 pp .*×1.02 .*×0.67\n"));
  // By model: m1 is the same in both runs; m2 went from 0% to 50%.
  EXPECT_THAT(table, ::testing::ContainsRegex("\nm1 +run1 .*\n +run2 +2 +100.0% +\\+0.0 pp"));
  EXPECT_THAT(table, ::testing::ContainsRegex("\nm2 +run1 .*\n +run2 +2 +50.0% +\\+50.0 pp"));
  EXPECT_THAT(ReportTable(FourResponse()), Not(HasSubstr("comparison")));
}

// A CUDA and a Triton experiment of one matrix side by side, the Triton one
// with fallbacks: each experiment's language, the fallback line, the
// fallback tables and the fallback comparison.
TEST(ReportTableTest, FallbacksAndLanguagesSideBySide) {
  v1::ExperimentReport cuda = Experiment("exp_c", "gemm-cuda", FourTrajectories(), {{"model"}});
  cuda.set_language("cuda");
  v1::ExperimentReport triton =
      Experiment("exp_t", "gemm-triton", fixtures::FallbackTrajectories(), {{"model"}});
  triton.set_language("triton");
  const std::string table = ReportTable(Response({cuda, triton}));
  EXPECT_THAT(table, HasSubstr("== experiment gemm-triton (exp_t), eval mode full, language "
                               "triton\n"));
  EXPECT_THAT(table, HasSubstr("  fallbacks  by checks 3 (75.0%), fallback-free 2 (50.0%); 2 "
                               "of 4 turns correct by checks were library fallbacks (50.0%)\n"));
  EXPECT_THAT(table, HasSubstr("  fallbacks  by checks 2 (50.0%), fallback-free 2 (50.0%); 0 "
                               "of 3 turns correct by checks were library fallbacks (0.0%)\n"));
  // The fallback table only for the experiment that has fallbacks.
  EXPECT_EQ(table.find("\nfallbacks by model\n"), table.rfind("\nfallbacks by model\n"));
  EXPECT_THAT(table, ::testing::ContainsRegex("\nfallbacks by model\nmodel +N +correct +by "
                                              "checks +fallback turns +fallback share\nm1 +2 "
                                              "+100.0% +100.0% +1/3 +33.3%\nm2 +2 +0.0% +50.0% "
                                              "+1/1 +100.0%\n"));
  EXPECT_THAT(table, HasSubstr("\n== comparison: differences from gemm-cuda (cuda)\n"));
  EXPECT_THAT(table, HasSubstr("\n== fallbacks comparison: differences from gemm-cuda (cuda)\n"));
  EXPECT_THAT(table, ::testing::ContainsRegex(
                         "\ngemm-triton \\(triton\\) +4 +50.0% +\\+0.0 pp +75.0% +\\+25.0 "
                         "pp +50.0% +\\+50.0 pp\n"));
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    EXPECT_LE(line.size(), 120u) << line;
  }
  // No fallback anywhere: no fallback tables or comparison.
  EXPECT_THAT(ReportTable(TwoRuns()), Not(HasSubstr("fallbacks by")));
  EXPECT_THAT(ReportTable(TwoRuns()), Not(HasSubstr("fallbacks comparison")));
}

// RFC 4180 rows with LF row ends, as REPORTS.md says.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  return ptxbench::testing::CsvRows(text, ptxbench::testing::CsvLineEnd::kLf);
}

// The cell of `column` in `row`, by the header's names.
std::string Cell(const std::vector<std::vector<std::string>>& rows, size_t row,
                 const std::string& column) {
  const auto& header = rows[0];
  const auto it = std::find(header.begin(), header.end(), column);
  EXPECT_NE(it, header.end()) << column;
  return it == header.end() ? "" : rows[row][it - header.begin()];
}

// The scores (docs/REPORTS.md, "Scores"), worked out in scores_test.cc.
v1::ReportResponse ScoresResponse() {
  return Response(
      {Experiment("exp_s", "scored", fixtures::ScoreTrajectories(), {{"model"}, {"category"}})});
}

// The held-out line: only where the experiment holds workloads out.
TEST(ReportTableTest, HeldOutWorkloadsHaveALineOfTheirOwn) {
  EXPECT_THAT(ReportTable(FourResponse()), Not(HasSubstr("held out")));
  std::vector<TrajectoryFacts> held = FourTrajectories();
  for (TrajectoryFacts& t : held) t.held_out = true;
  held[2].turns[0].shown_correct = true;  // C: correct on what it was shown only
  const std::string table = ReportTable(Response({Experiment("exp_1", "run1", held, {})}));
  EXPECT_THAT(table, HasSubstr("  held out   4 trajectories hold workloads out; correct on the "
                               "shown ones 3 (75.0%), found out 1 (25.0%)\n"))
      << table;
}

TEST(ReportTableTest, ShowsTheScoresAndTheVarianceInCorrectness) {
  const std::string table = ReportTable(ScoresResponse());
  EXPECT_THAT(table, HasSubstr("  scores     weighted roofline 0.317 (3 trajectories, weight 6), "
                               "SOL-Score 0.442 (3 trajectories, weight 6)\n"));
  EXPECT_THAT(table, HasSubstr("  slower     2/4 (50.0%) of correct timed turns slower than the "
                               "reference\n"));
  EXPECT_THAT(table, HasSubstr("persistent 1.73x (2), rescued 0.63x (2)\n"));
  // Correct: m1 2 of 2, m2 1 of 2; gemm 1 of 2, attention 2 of 2: each
  // explains (4.4987 - 2.7726) / 4.4987 = 38.4% of the null deviance.
  EXPECT_THAT(table, HasSubstr("explained: by category 38.4% (2 levels), by model 38.4% "
                               "(2 levels); null deviance 4.499\n"));
  EXPECT_THAT(table, HasSubstr("\nscores by category\n"));
  // attention: S2 (weight 1, SOL 0.4); S4 left out. gemm: (3 * 0.75) / 5.
  EXPECT_THAT(table, HasSubstr("\nattention  2         0.400      0.400      2/3 (66.7%)   1.50x (1)  0.63x (2)\n"));
  EXPECT_THAT(table, HasSubstr("\ngemm       2         0.300      0.450       0/1 (0.0%)   2.00x (1)          -\n"));
  EXPECT_THAT(table, HasSubstr("\ncorrect turns' speedups by turn, persistent and rescued\n"));
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    EXPECT_LE(line.size(), 120u) << line;
  }
}

TEST(ReportJsonTest, TheScoresAreFieldsOfTheMessage) {
  const absl::StatusOr<std::string> json = ProtoJson(ScoresResponse(), /*indent=*/false);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_THAT(*json, HasSubstr("\"sol_score\":0.44166666666666665"));
  EXPECT_THAT(*json, HasSubstr("\"weighted_roofline_count\":\"3\""));
  EXPECT_THAT(*json, HasSubstr("\"slower_share\":0.5"));
  EXPECT_THAT(*json, HasSubstr("\"rescue_speedups_by_turn\":["));
  EXPECT_THAT(*json, HasSubstr("\"correctness_variance\":{"));
}

TEST(ReportCsvTest, TheScoresHaveColumns) {
  const auto rows = ParseCsv(ReportCsv(ScoresResponse()));
  ASSERT_EQ(rows.size(), 1u + 1 + 2 + 2);  // header, total, 2 models, 2 categories
  for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size());
  EXPECT_EQ(Cell(rows, 1, "weighted_roofline"), "0.3166666667");
  EXPECT_EQ(Cell(rows, 1, "sol_score"), "0.4416666667");
  EXPECT_EQ(Cell(rows, 1, "sol_score_count"), "3");
  EXPECT_EQ(Cell(rows, 1, "sol_score_weight"), "6");
  EXPECT_EQ(Cell(rows, 1, "slower_share"), "0.5");
  EXPECT_EQ(Cell(rows, 1, "persistent_geomean"), "1.732050808");
  EXPECT_EQ(Cell(rows, 1, "rescued_count"), "2");
  EXPECT_EQ(Cell(rows, 1, "variance_category_share"), "0.3836885466");
  EXPECT_EQ(Cell(rows, 2, "variance_category_share"), "") << "a group's line has none";
  EXPECT_EQ(Cell(rows, 2, "model"), "m1");
  EXPECT_EQ(Cell(rows, 2, "sol_score"), "0.6625");
}

TEST(ReportCsvTest, OneRowPerGroupWithTheSameColumns) {
  const auto rows = ParseCsv(ReportCsv(FourResponse()));
  // Header, total, 2 models, 2 tags, 4 model+tag, 3 turns.
  ASSERT_EQ(rows.size(), 1u + 1 + 2 + 2 + 4 + 3);
  for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size());
  EXPECT_EQ(rows[0][0], "experiment_id");
  EXPECT_EQ(Cell(rows, 1, "grouping"), "total");
  EXPECT_EQ(Cell(rows, 1, "correct"), "2");
  EXPECT_EQ(Cell(rows, 1, "correct_rate"), "0.5");
  EXPECT_EQ(Cell(rows, 1, "rescue_rate"), "0.3333333333");
  EXPECT_EQ(Cell(rows, 1, "cost_usd"), "0.09");
  EXPECT_EQ(Cell(rows, 1, "state_limits_exceeded"), "2");
  EXPECT_EQ(Cell(rows, 1, "pass_at_3"), "0.5");
  EXPECT_EQ(Cell(rows, 1, "fast_1"), "0.25");
  EXPECT_EQ(Cell(rows, 1, "fast_1.5"), "0.25");
  EXPECT_EQ(Cell(rows, 1, "outcome_passed"), "3");
  EXPECT_EQ(Cell(rows, 1, "outcome_pending"), "1");
  EXPECT_EQ(Cell(rows, 1, "simulated_trajectories"), "2");
  EXPECT_EQ(Cell(rows, 1, "correct_by_checks"), "2");
  EXPECT_EQ(Cell(rows, 1, "fallback_correct_turns"), "0");
  EXPECT_EQ(Cell(rows, 1, "passed_turns"), "3");
  EXPECT_EQ(Cell(rows, 1, "model"), "");
  // The model+tag rows name both; turn 1 has no pass_at_2 or pass_at_3.
  EXPECT_EQ(Cell(rows, 6, "grouping"), "model+tag");
  EXPECT_EQ(Cell(rows, 6, "model"), "m1");
  EXPECT_EQ(Cell(rows, 6, "tag"), "t1");
  EXPECT_EQ(Cell(rows, 10, "grouping"), "turn");
  EXPECT_EQ(Cell(rows, 10, "turn"), "1");
  EXPECT_EQ(Cell(rows, 10, "pass_at_1"), "0.25");
  EXPECT_EQ(Cell(rows, 10, "pass_at_2"), "");
}

TEST(ReportCsvTest, TheFallbackFiguresAndTheLanguageHaveColumns) {
  v1::ExperimentReport triton =
      Experiment("exp_t", "gemm-triton", fixtures::FallbackTrajectories(), {{"model"}});
  triton.set_language("triton");
  const auto rows = ParseCsv(ReportCsv(Response({triton})));
  ASSERT_EQ(rows.size(), 4u);  // header, total, m1, m2
  EXPECT_EQ(Cell(rows, 1, "language"), "triton");
  EXPECT_EQ(Cell(rows, 1, "correct_rate"), "0.5");
  EXPECT_EQ(Cell(rows, 1, "correct_by_checks"), "3");
  EXPECT_EQ(Cell(rows, 1, "correct_by_checks_rate"), "0.75");
  EXPECT_EQ(Cell(rows, 1, "passed_turns"), "2");
  EXPECT_EQ(Cell(rows, 1, "fallback_correct_turns"), "2");
  EXPECT_EQ(Cell(rows, 1, "fallback_share"), "0.5");
  EXPECT_EQ(Cell(rows, 2, "fallback_share"), "0.3333333333");
}

TEST(ReportCsvTest, QuotesFieldsThatNeedIt) {
  std::vector<TrajectoryFacts> trajectories = FourTrajectories();
  trajectories[0].model = "org/model, \"large\"\nv2";
  const std::string csv =
      ReportCsv(Response({Experiment("exp_1", "a,b", trajectories, {{"model"}})}));
  EXPECT_THAT(csv, HasSubstr("\"a,b\""));
  EXPECT_THAT(csv, HasSubstr("\"org/model, \"\"large\"\"\nv2\""));
  const auto rows = ParseCsv(csv);
  ASSERT_EQ(rows.size(), 5u);  // header, total, models m1, m2, org/...
  for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size());
  EXPECT_EQ(Cell(rows, 1, "experiment"), "a,b");
  EXPECT_EQ(Cell(rows, 4, "model"), "org/model, \"large\"\nv2");
}

}  // namespace
}  // namespace ptxbench::report
