// ReportCsv (results/report/text.h): the flat table of a report for tools. The
// columns are listed in docs/REPORTS.md ("CSV").

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "results/report/group_accumulator.h"
#include "results/report/metrics.h"
#include "results/report/text.h"

namespace ptxbench::report {
namespace {

using v1::GroupReport;
using Cells = std::vector<std::pair<std::string, std::string>>;

// Enough digits for any rate or cost, without the noise of %.17g.
std::string Number(double value) { return absl::StrFormat("%.10g", value); }

// RFC 4180: a field with a comma, a quote or a line break is quoted, its
// quotes doubled.
std::string Quote(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// The scalar metrics of a group, named. Built per row, so that the header
// (the names of an empty group's) cannot drift from the cells.
Cells Scalars(const GroupReport& group) {
  Cells cells = {{"trajectories", absl::StrCat(group.trajectories())},
                 {"finished", absl::StrCat(group.finished())}};
  for (int state = v1::TrajectoryState_MIN + 1; state <= v1::TrajectoryState_MAX; ++state) {
    const std::string name = v1::TrajectoryState_Name(state);
    const auto it = group.by_state().find(name);
    cells.emplace_back(absl::StrCat("state_", absl::AsciiStrToLower(name)),
                       absl::StrCat(it == group.by_state().end() ? 0 : it->second));
  }
  const v1::Usage& tokens = group.tokens();
  const Cells rest = {
      {"correct", absl::StrCat(group.correct())},
      {"correct_rate", Number(group.correct_rate())},
      {"correct_by_checks", absl::StrCat(group.correct_by_checks())},
      {"correct_by_checks_rate", Number(group.correct_by_checks_rate())},
      {"passed_turns", absl::StrCat(group.passed_turns())},
      {"fallback_correct_turns", absl::StrCat(group.fallback_correct_turns())},
      {"fallback_share", Number(group.fallback_share())},
      {"correct_on_shown_rate", Number(group.correct_on_shown_rate())},
      {"found_out_rate", Number(group.found_out_rate())},
      {"target_met", absl::StrCat(group.target_met())},
      {"target_met_rate", Number(group.target_met_rate())},
      {"speedup_count", absl::StrCat(group.speedup_count())},
      {"geomean_speedup", Number(group.geomean_speedup())},
      {"best_speedup", Number(group.best_speedup())},
      {"roofline_count", absl::StrCat(group.roofline_count())},
      {"roofline_fraction", Number(group.roofline_fraction())},
      {"first_turn_failed", absl::StrCat(group.first_turn_failed())},
      {"rescued", absl::StrCat(group.rescued())},
      {"rescue_rate", Number(group.rescue_rate())},
      {"input_tokens", absl::StrCat(tokens.input_tokens())},
      {"output_tokens", absl::StrCat(tokens.output_tokens())},
      {"reasoning_tokens", absl::StrCat(tokens.reasoning_tokens())},
      {"cached_tokens", absl::StrCat(tokens.cached_tokens())},
      {"cost_usd", Number(group.cost_usd())},
      {"cost_per_correct_usd", Number(group.cost_per_correct_usd())},
      {"model_calls", absl::StrCat(group.model_calls())},
      {"evaluations", absl::StrCat(group.evaluations())},
      {"model_latency_count", absl::StrCat(group.model_latency_ms().count())},
      {"model_latency_p50_ms", Number(group.model_latency_ms().p50())},
      {"model_latency_p95_ms", Number(group.model_latency_ms().p95())},
      {"eval_time_count", absl::StrCat(group.eval_time_ms().count())},
      {"eval_time_p50_ms", Number(group.eval_time_ms().p50())},
      {"eval_time_p95_ms", Number(group.eval_time_ms().p95())},
      {"weighted_roofline_count", absl::StrCat(group.weighted_roofline_count())},
      {"weighted_roofline_weight", Number(group.weighted_roofline_weight())},
      {"weighted_roofline", Number(group.weighted_roofline())},
      {"sol_score_count", absl::StrCat(group.sol_score_count())},
      {"sol_score_weight", Number(group.sol_score_weight())},
      {"sol_score", Number(group.sol_score())},
      {"timed_correct_turns", absl::StrCat(group.timed_correct_turns())},
      {"slower_turns", absl::StrCat(group.slower_turns())},
      {"slower_share", Number(group.slower_share())},
      {"persistent_count", absl::StrCat(group.rescue_speedups().persistent().count())},
      {"persistent_geomean", Number(group.rescue_speedups().persistent().geomean())},
      {"rescued_count", absl::StrCat(group.rescue_speedups().rescued().count())},
      {"rescued_geomean", Number(group.rescue_speedups().rescued().geomean())},
  };
  cells.insert(cells.end(), rest.begin(), rest.end());
  return cells;
}

// The thresholds of the fast_* columns: the response's, else this build's.
std::vector<double> Thresholds(const v1::ReportResponse& response) {
  if (response.fast_p_thresholds().empty()) return FastPThresholds();
  return {response.fast_p_thresholds().begin(), response.fast_p_thresholds().end()};
}

struct Row {
  const v1::ExperimentReport* experiment;
  std::string grouping;
  const GroupReport* group;
};

std::vector<Row> Rows(const v1::ReportResponse& response) {
  std::vector<Row> rows;
  for (const v1::ExperimentReport& experiment : response.experiments()) {
    rows.push_back({&experiment, "total", &experiment.total()});
    for (const v1::GroupingReport& grouping : experiment.groupings()) {
      const std::string name = absl::StrJoin(grouping.by(), "+");
      for (const GroupReport& group : grouping.groups())
        rows.push_back({&experiment, name, &group});
    }
  }
  return rows;
}

// The cells of the columns after the scalars: pass_at_1..pass_at_T (empty
// past the group's own T), fast_<p>, outcome_<class>, and the labels.
std::vector<std::string> TailCells(const GroupReport& group, int last_turn,
                                   const std::vector<double>& thresholds) {
  std::vector<std::string> cells;
  for (int t = 0; t < last_turn; ++t) {
    cells.push_back(t < group.pass_at_turn_size() ? Number(group.pass_at_turn(t).rate()) : "");
  }
  for (double p : thresholds) {
    const auto& fast = group.fast_p();
    const auto it =
        std::find_if(fast.begin(), fast.end(), [p](const v1::FastP& f) { return f.p() == p; });
    cells.push_back(it == fast.end() ? "" : Number(it->rate()));
  }
  for (const char* name : kOutcomeClasses) {
    int64_t sum = 0;
    for (const v1::TurnOutcomes& turn : group.outcomes_by_turn()) {
      const auto it = turn.classes().find(name);
      if (it != turn.classes().end()) sum += it->second;
    }
    cells.push_back(absl::StrCat(sum));
  }
  cells.push_back(absl::StrCat(group.simulated_trajectories()));
  cells.push_back(absl::StrCat(group.scripted_turns()));
  return cells;
}

void AppendLine(const std::vector<std::string>& fields, std::string* out) {
  bool first = true;
  for (const std::string& field : fields) {
    if (!first) *out += ',';
    first = false;
    *out += Quote(field);
  }
  *out += '\n';
}

}  // namespace

std::string ReportCsv(const v1::ReportResponse& response) {
  const std::vector<Row> rows = Rows(response);
  const std::vector<double> thresholds = Thresholds(response);
  int last_turn = 0;
  for (const Row& row : rows) last_turn = std::max(last_turn, row.group->pass_at_turn_size());

  std::vector<std::string> header = {"experiment_id", "experiment", "language", "grouping"};
  header.insert(header.end(), kDimensions.begin(), kDimensions.end());
  for (const auto& [name, value] : Scalars(GroupReport())) header.push_back(name);
  for (int t = 1; t <= last_turn; ++t) header.push_back(absl::StrCat("pass_at_", t));
  for (double p : thresholds) header.push_back(absl::StrFormat("fast_%g", p));
  for (const char* name : kOutcomeClasses) header.push_back(absl::StrCat("outcome_", name));
  header.push_back("simulated_trajectories");
  header.push_back("scripted_turns");
  // The experiment's variance in correctness: on its total line only, as it
  // is no group's figure.
  for (const char* name : {"variance_null_deviance", "variance_category_share",
                           "variance_model_share"}) {
    header.push_back(name);
  }

  std::string out;
  AppendLine(header, &out);
  for (const Row& row : rows) {
    std::vector<std::string> fields = {row.experiment->experiment_id(), row.experiment->name(),
                                       row.experiment->language(), row.grouping};
    for (const char* dimension : kDimensions) {
      const auto it = row.group->key().find(dimension);
      fields.push_back(it == row.group->key().end() ? "" : it->second);
    }
    for (auto& [name, value] : Scalars(*row.group)) fields.push_back(std::move(value));
    for (std::string& cell : TailCells(*row.group, last_turn, thresholds)) {
      fields.push_back(std::move(cell));
    }
    const v1::CorrectnessVariance& variance = row.experiment->correctness_variance();
    const bool total = row.group == &row.experiment->total();
    fields.push_back(total ? Number(variance.null_deviance()) : "");
    fields.push_back(total ? Number(variance.category_share()) : "");
    fields.push_back(total ? Number(variance.model_share()) : "");
    AppendLine(fields, &out);
  }
  return out;
}

}  // namespace ptxbench::report
