#include "results/report/text_compare.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "common/text_format.h"
#include "results/report/text_cells.h"

namespace ptxbench::report {
namespace {

using v1::GroupReport;
using Dimensions = google::protobuf::RepeatedPtrField<std::string>;

// A compared metric: rates differ in percentage points, the others by ratio.
struct Metric {
  const char* header;
  double (*value)(const GroupReport&);
  enum Kind { kRate, kSpeedup, kCost } kind;
};

double Fast1(const GroupReport& group) {
  const v1::FastP* fast = FindFastP(group, 1.0);
  return fast == nullptr ? 0 : fast->rate();
}

// The fallback figures (docs/REPORTS.md, "Fallbacks"), compared in a
// section of their own where an experiment has a fallback-correct turn.
const Metric kFallbackMetrics[] = {
    {"correct", [](const GroupReport& g) { return g.correct_rate(); }, Metric::kRate},
    {"by checks", [](const GroupReport& g) { return g.correct_by_checks_rate(); }, Metric::kRate},
    {"fallback share", [](const GroupReport& g) { return g.fallback_share(); }, Metric::kRate},
};

const Metric kMetrics[] = {
    {"correct", [](const GroupReport& g) { return g.correct_rate(); }, Metric::kRate},
    {"target", [](const GroupReport& g) { return g.target_met_rate(); }, Metric::kRate},
    {"fast_1", Fast1, Metric::kRate},
    {"geomean", [](const GroupReport& g) { return g.geomean_speedup(); }, Metric::kSpeedup},
    {"$/correct", [](const GroupReport& g) { return g.cost_per_correct_usd(); }, Metric::kCost},
};

std::string ValueCell(const Metric& metric, const GroupReport& group) {
  const double value = metric.value(group);
  switch (metric.kind) {
    case Metric::kRate:
      return Percent(value);
    case Metric::kSpeedup:
      return FormatSpeedup(value);
    case Metric::kCost:
      return value > 0 ? FormatCost(value) : "-";
  }
  return "";
}

// "+12.5 pp" for rates, "×1.23" for the others (when both are known).
std::string DifferenceCell(const Metric& metric, const GroupReport& group,
                           const GroupReport& base) {
  const double value = metric.value(group);
  const double base_value = metric.value(base);
  if (metric.kind == Metric::kRate) {
    return absl::StrFormat("%+.1f pp", (value - base_value) * 100);
  }
  if (value > 0 && base_value > 0) return absl::StrFormat("×%.2f", value / base_value);
  return "";
}

class KeyLess {
 public:
  explicit KeyLess(const Dimensions* by) : by_(by) {}
  bool operator()(const std::vector<std::string>& a, const std::vector<std::string>& b) const {
    return KeyValuesLess(*by_, a, b);
  }

 private:
  const Dimensions* by_;
};

// Group key -> the group in each experiment (null where it has none).
using Rows = std::map<std::vector<std::string>, std::vector<const GroupReport*>, KeyLess>;

void AppendSection(absl::string_view title, const Dimensions& by, const Rows& rows,
                   const v1::ReportResponse& response, absl::Span<const Metric> metrics,
                   std::string* out) {
  std::vector<std::string> headers(by.begin(), by.end());
  headers.push_back("experiment");
  headers.push_back("N");
  for (const Metric& metric : metrics) {
    headers.push_back(metric.header);
    headers.push_back(metric.kind == Metric::kRate ? "diff" : "ratio");
  }
  Table table(headers);
  for (size_t c = by.size() + 1; c < headers.size(); ++c) table.AlignRight(c);
  for (const auto& [key, groups] : rows) {
    for (size_t e = 0; e < groups.size(); ++e) {
      std::vector<std::string> row;
      // The key on the group's first line only, so that groups stand apart.
      for (const std::string& value : key) row.push_back(e == 0 ? ShownValue(value) : "");
      row.push_back(ExperimentLabelWithLanguage(response.experiments(static_cast<int>(e))));
      const GroupReport* group = groups[e];
      if (group == nullptr) {
        row.push_back("-");
        table.AddRow(std::move(row));
        continue;
      }
      row.push_back(absl::StrCat(group->trajectories()));
      for (const Metric& metric : metrics) {
        row.push_back(ValueCell(metric, *group));
        const bool compared = e > 0 && groups[0] != nullptr;
        row.push_back(compared ? DifferenceCell(metric, *group, *groups[0]) : "");
      }
      table.AddRow(std::move(row));
    }
  }
  absl::StrAppend(out, "\n", title, "\n", table.Render());
}

// The comparison of `metrics`, its section titles starting with `prefix`.
void AppendComparisonOf(const v1::ReportResponse& response, absl::Span<const Metric> metrics,
                        absl::string_view prefix, std::string* out) {
  absl::StrAppend(out, "\n== ", prefix, "comparison: differences from ",
                  ExperimentLabelWithLanguage(response.experiments(0)), "\n");
  const size_t experiments = response.experiments_size();
  const Dimensions none;
  Rows total{KeyLess(&none)};
  for (size_t e = 0; e < experiments; ++e) {
    auto& groups = total[std::vector<std::string>()];
    groups.resize(experiments);
    groups[e] = &response.experiments(static_cast<int>(e)).total();
  }
  AppendSection("total", none, total, response, metrics, out);

  // The groupings are the request's, so every experiment has the same ones.
  for (int g = 0; g < response.experiments(0).groupings_size(); ++g) {
    const Dimensions& by = response.experiments(0).groupings(g).by();
    Rows rows{KeyLess(&by)};
    for (size_t e = 0; e < experiments; ++e) {
      const v1::ExperimentReport& experiment = response.experiments(static_cast<int>(e));
      if (g >= experiment.groupings_size()) continue;
      for (const GroupReport& group : experiment.groupings(g).groups()) {
        auto& groups = rows[KeyValues(group, by)];
        groups.resize(experiments);
        groups[e] = &group;
      }
    }
    AppendSection(absl::StrCat("by ", absl::StrJoin(by, " and ")), by, rows, response, metrics,
                  out);
  }
}

}  // namespace

void AppendComparison(const v1::ReportResponse& response, std::string* out) {
  AppendComparisonOf(response, kMetrics, "", out);
  bool fallbacks = false;
  for (const v1::ExperimentReport& e : response.experiments()) {
    fallbacks |= e.total().fallback_correct_turns() > 0;
  }
  if (fallbacks) AppendComparisonOf(response, kFallbackMetrics, "fallbacks ", out);
}

}  // namespace ptxbench::report
