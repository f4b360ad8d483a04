#include "results/report/text_scores.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/text_format.h"
#include "results/report/text_cells.h"

namespace ptxbench::report {
namespace {

using v1::GroupReport;

// "0.425"; "-" when no trajectory counted.
std::string WeightedCell(double value, int64_t count) {
  return count == 0 ? "-" : absl::StrFormat("%.3f", value);
}

// "1.23x (4)": a geomean and how many speedups it is of; "-" for none.
std::string MeanCell(const v1::SpeedupMean& mean) {
  return mean.count() == 0 ? "-"
                           : absl::StrCat(FormatSpeedup(mean.geomean()), " (", mean.count(), ")");
}

std::string SlowerCell(const GroupReport& group) {
  return group.timed_correct_turns() == 0
             ? "-"
             : absl::StrCat(group.slower_turns(), "/", group.timed_correct_turns(), " (",
                            Percent(group.slower_share()), ")");
}

}  // namespace

void AppendScoreLines(const GroupReport& total, std::string* out) {
  absl::StrAppendFormat(
      out, "  %-10s %s\n", "scores",
      absl::StrCat("weighted roofline ",
                   WeightedCell(total.weighted_roofline(), total.weighted_roofline_count()), " (",
                   total.weighted_roofline_count(), " trajectories, weight ",
                   absl::StrFormat("%g", total.weighted_roofline_weight()), "), SOL-Score ",
                   WeightedCell(total.sol_score(), total.sol_score_count()), " (",
                   total.sol_score_count(), " trajectories, weight ",
                   absl::StrFormat("%g", total.sol_score_weight()), ")"));
  absl::StrAppendFormat(
      out, "  %-10s %s\n", "slower",
      absl::StrCat(SlowerCell(total), " of correct timed turns slower than the reference"));
  absl::StrAppendFormat(out, "  %-10s %s\n", "rescue",
                        absl::StrCat("geomean speedup of correct turns: persistent ",
                                     MeanCell(total.rescue_speedups().persistent()), ", rescued ",
                                     MeanCell(total.rescue_speedups().rescued())));
}

void AppendVarianceLine(const v1::ExperimentReport& experiment, std::string* out) {
  const v1::CorrectnessVariance& v = experiment.correctness_variance();
  absl::StrAppendFormat(
      out, "  %-10s %s\n", "variance",
      v.null_deviance() <= 0
          ? std::string("- (every trajectory correct, or none: nothing to explain)")
          : absl::StrCat("of correctness explained: by category ", Percent(v.category_share()),
                         " (", v.category_levels(), " levels), by model ", Percent(v.model_share()),
                         " (", v.model_levels(), " levels); null deviance ",
                         absl::StrFormat("%.4g", v.null_deviance())));
}

void AppendScoreTable(const v1::GroupingReport& grouping, std::string* out) {
  Table table = GroupingTable(grouping.by(), {"N", "wtd roofline", "SOL-Score", "slower than ref",
                                              "persistent", "rescued"});
  for (const GroupReport& group : grouping.groups()) {
    std::vector<std::string> row = ShownKey(group, grouping.by());
    row.push_back(absl::StrCat(group.trajectories()));
    row.push_back(WeightedCell(group.weighted_roofline(), group.weighted_roofline_count()));
    row.push_back(WeightedCell(group.sol_score(), group.sol_score_count()));
    row.push_back(SlowerCell(group));
    row.push_back(MeanCell(group.rescue_speedups().persistent()));
    row.push_back(MeanCell(group.rescue_speedups().rescued()));
    table.AddRow(std::move(row));
  }
  absl::StrAppend(out, "\nscores by ", absl::StrJoin(grouping.by(), " and "), "\n", table.Render());
}

void AppendRescueByTurn(const GroupReport& total, std::string* out) {
  if (total.rescue_speedups_by_turn().empty()) return;
  Table table({"turn", "persistent", "rescued"});
  for (size_t c = 0; c < 3; ++c) table.AlignRight(c);
  for (const v1::RescueSpeedups& turn : total.rescue_speedups_by_turn()) {
    table.AddRow(
        {absl::StrCat(turn.turn() + 1), MeanCell(turn.persistent()), MeanCell(turn.rescued())});
  }
  absl::StrAppend(out, "\ncorrect turns' speedups by turn, persistent and rescued\n",
                  table.Render());
}

}  // namespace ptxbench::report
