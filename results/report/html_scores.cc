#include "results/report/html_scores.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "results/report/html_table.h"
#include "results/report/svg.h"

namespace ptxbench::report::html {
namespace {

using ::ptxbench::v1::ExperimentReport;
using ::ptxbench::v1::GroupReport;

// "0.425 (3)": a weighted mean and the trajectories it is of; "—" for none.
std::string Weighted(double value, int64_t count) {
  if (count == 0) return "—";
  return absl::StrFormat("%.3f (%s)", value, FormatCount(count));
}

std::string Slower(const GroupReport& g) {
  if (g.timed_correct_turns() == 0) return "—";
  return absl::StrCat(FormatPercent(g.slower_share()), " of ",
                      FormatCount(g.timed_correct_turns()));
}

std::string Mean(const ptxbench::v1::SpeedupMean& mean) {
  if (mean.count() == 0) return "—";
  return absl::StrCat(FormatSpeedup(mean.geomean(), mean.count()), " (", FormatCount(mean.count()),
                      ")");
}

std::vector<Cell> Row(const GroupReport& g, const std::vector<std::string>& by) {
  std::vector<Cell> row = KeyCells(g, by);
  row.push_back({FormatCount(g.trajectories())});
  row.push_back({Weighted(g.weighted_roofline(), g.weighted_roofline_count())});
  row.push_back({Weighted(g.sol_score(), g.sol_score_count())});
  row.push_back({Slower(g)});
  row.push_back({Mean(g.rescue_speedups().persistent())});
  row.push_back({Mean(g.rescue_speedups().rescued())});
  return row;
}

std::string ScoresTable(const ExperimentReport& e, const std::vector<std::string>& by,
                        const std::vector<const GroupReport*>& groups) {
  Table table;
  table.css = "metrics scores";
  table.key_columns = std::max<size_t>(1, by.size());
  table.header = by.empty() ? std::vector<std::string>{"trajectories of"} : by;
  table.header.insert(table.header.end(),
                      {"n", "weighted roofline", "SOL-Score", "correct but slower than reference",
                       "persistent speedup", "rescued speedup"});
  for (const GroupReport* g : groups) table.rows.push_back(Row(*g, by));
  table.total_from = table.rows.size();
  table.rows.push_back(Row(e.total(), by));
  return RenderTable(table);
}

std::string RescueByTurn(const GroupReport& total) {
  if (total.rescue_speedups_by_turn().empty()) return "";
  Table table;
  table.css = "metrics";
  table.header = {"turn", "persistent speedup", "rescued speedup"};
  for (const auto& turn : total.rescue_speedups_by_turn()) {
    table.rows.push_back(
        {{absl::StrCat(turn.turn() + 1), "key"}, Mean(turn.persistent()), Mean(turn.rescued())});
  }
  return absl::StrCat("<h4>Correct turns' speedups by turn</h4>", RenderTable(table));
}

std::string Variance(const ExperimentReport& e) {
  const ptxbench::v1::CorrectnessVariance& v = e.correctness_variance();
  if (v.null_deviance() <= 0) {
    return "<p class=\"variance\">Variance in correctness: none to explain (every trajectory "
           "correct, or none).</p>";
  }
  return absl::StrCat(
      "<p class=\"variance\">Variance in correctness explained: by category <strong>",
      FormatPercent(v.category_share()), "</strong> (", FormatCount(v.category_levels()),
      " levels), by model <strong>", FormatPercent(v.model_share()), "</strong> (",
      FormatCount(v.model_levels()), " levels), of a null deviance of ",
      absl::StrFormat("%.4g", v.null_deviance()), " over ", FormatCount(v.trajectories()),
      " trajectories.</p>");
}

}  // namespace

std::string ScoresSection(const ExperimentReport& e, bool titled) {
  std::string out = "<section class=\"metrics scores\">";
  if (titled) absl::StrAppend(&out, "<h3>", EscapeHtml(ExperimentName(e)), "</h3>");
  absl::StrAppend(&out, Variance(e));
  if (e.groupings().empty()) {
    absl::StrAppend(&out, "<h4>All trajectories</h4>", ScoresTable(e, {}, {}));
  }
  for (const auto& grouping : e.groupings()) {
    std::vector<std::string> by(grouping.by().begin(), grouping.by().end());
    std::vector<const GroupReport*> groups;
    for (const GroupReport& g : grouping.groups()) groups.push_back(&g);
    absl::StrAppend(&out, "<h4>Scores by ", EscapeHtml(absl::StrJoin(by, " and ")), "</h4>",
                    ScoresTable(e, by, groups));
  }
  absl::StrAppend(
      &out, RescueByTurn(e.total()),
      "<p class=\"meta\">Each trajectory weighs its definition's importance and counts by its "
      "best correct kernel. Weighted roofline: the importance-weighted mean roofline fraction "
      "(no correct kernel: 0). SOL-Score: the importance-weighted mean of 1 / (1 + (T_k − "
      "T_SOL) / (T_b − T_SOL)) (no correct kernel: 0); a correct kernel without the figure "
      "is left out; in parentheses, the trajectories counted. Correct but slower than "
      "reference: of the correct timed turns. Persistent: correct turns with no failed turn "
      "before; rescued: correct turns after one. Variance explained: deviance reduction of a "
      "logistic model over the null model's deviance.</p></section>");
  return out;
}

}  // namespace ptxbench::report::html
