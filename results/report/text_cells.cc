#include "results/report/text_cells.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ptxbench::report {

std::string Percent(double rate) { return absl::StrFormat("%.1f%%", rate * 100); }

std::string Millis(double ms) {
  if (ms < 1000) return absl::StrFormat("%.0fms", ms);
  if (ms < 60'000) return absl::StrFormat("%.1fs", ms / 1000);
  return absl::StrFormat("%.1fm", ms / 60'000);
}

std::string P50P95(const v1::Percentiles& percentiles) {
  if (percentiles.count() == 0) return "-";
  return absl::StrCat(Millis(percentiles.p50()), "/", Millis(percentiles.p95()));
}

std::string ShownValue(const std::string& value) { return value.empty() ? "(none)" : value; }

std::string ExperimentLabel(const v1::ExperimentReport& experiment) {
  return experiment.name().empty() ? experiment.experiment_id() : experiment.name();
}

std::string ExperimentLabelWithLanguage(const v1::ExperimentReport& experiment) {
  if (experiment.language().empty()) return ExperimentLabel(experiment);
  return absl::StrCat(ExperimentLabel(experiment), " (", experiment.language(), ")");
}

std::string FallbackSummary(const v1::GroupReport& group) {
  const int64_t by_checks = group.fallback_correct_turns() + group.passed_turns();
  return absl::StrCat("by checks ", group.correct_by_checks(), " (",
                      Percent(group.correct_by_checks_rate()), "), fallback-free ",
                      group.correct(), " (", Percent(group.correct_rate()), "); ",
                      group.fallback_correct_turns(), " of ", by_checks,
                      by_checks == 1 ? " turn" : " turns", " correct by checks ",
                      group.fallback_correct_turns() == 1 ? "was a library fallback ("
                                                          : "were library fallbacks (",
                      Percent(group.fallback_share()), ")");
}

std::string EvalModeName(v1::EvalMode mode) {
  switch (mode) {
    case v1::FULL:
      return "full";
    case v1::COMPILE_ONLY:
      return "compile-only";
    default:
      return "unspecified";
  }
}

std::string Labels(const v1::GroupReport& group) {
  const bool simulated = group.simulated_trajectories() > 0;
  const bool scripted = group.scripted_turns() > 0;
  if (simulated && scripted) return "SIM+SCRIPTED";
  if (simulated) return "SIMULATED";
  if (scripted) return "SCRIPTED";
  return "";
}

double PassAt1(const v1::GroupReport& group) {
  return group.pass_at_turn().empty() ? 0 : group.pass_at_turn(0).rate();
}

const v1::FastP* FindFastP(const v1::GroupReport& group, double p) {
  for (const v1::FastP& fast : group.fast_p()) {
    if (fast.p() == p) return &fast;
  }
  return nullptr;
}

std::vector<std::string> KeyValues(const v1::GroupReport& group,
                                   const google::protobuf::RepeatedPtrField<std::string>& by) {
  std::vector<std::string> values;
  for (const std::string& dimension : by) {
    const auto it = group.key().find(dimension);
    values.push_back(it == group.key().end() ? "" : it->second);
  }
  return values;
}

std::vector<std::string> ShownKey(const v1::GroupReport& group,
                                  const google::protobuf::RepeatedPtrField<std::string>& by) {
  std::vector<std::string> values = KeyValues(group, by);
  for (std::string& value : values) value = ShownValue(value);
  return values;
}

Table GroupingTable(const google::protobuf::RepeatedPtrField<std::string>& by,
                    const std::vector<std::string>& metrics) {
  std::vector<std::string> headers(by.begin(), by.end());
  headers.insert(headers.end(), metrics.begin(), metrics.end());
  Table table(headers);
  for (size_t c = by.size(); c < headers.size(); ++c) table.AlignRight(c);
  return table;
}

bool KeyValuesLess(const google::protobuf::RepeatedPtrField<std::string>& by,
                   const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (int d = 0; d < by.size(); ++d) {
    if (a[d] == b[d]) continue;
    int64_t turn_a = 0;
    int64_t turn_b = 0;
    if (by[d] == "turn" && absl::SimpleAtoi(a[d], &turn_a) && absl::SimpleAtoi(b[d], &turn_b)) {
      return turn_a < turn_b;
    }
    return a[d] < b[d];
  }
  return false;
}

}  // namespace ptxbench::report
