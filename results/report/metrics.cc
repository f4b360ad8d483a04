#include "results/report/metrics.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ptxbench::report {

const std::vector<double>& FastPThresholds() {
  static const std::vector<double>* const kThresholds =
      new std::vector<double>(kFastPThresholds.begin(), kFastPThresholds.end());
  return *kThresholds;
}

absl::StatusOr<ReportBuilder> ReportBuilder::Create(
    std::vector<std::vector<std::string>> groupings) {
  const std::string known = absl::StrJoin(kDimensions, ", ");
  std::vector<Grouping> parsed;
  for (auto& by : groupings) {
    if (by.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("an empty grouping: name one or more of ", known));
    }
    Grouping grouping;
    for (const std::string& name : by) {
      const auto* found = std::find_if(kDimensions.begin(), kDimensions.end(),
                                       [&](const char* dimension) { return name == dimension; });
      if (found == kDimensions.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown grouping dimension \"", name, "\" (known: ", known, ")"));
      }
      const auto dimension = static_cast<Dimension>(found - kDimensions.begin());
      if (std::find(grouping.dimensions.begin(), grouping.dimensions.end(), dimension) !=
          grouping.dimensions.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("grouping \"", absl::StrJoin(by, ","), "\" names \"", name, "\" twice"));
      }
      grouping.dimensions.push_back(dimension);
    }
    grouping.by = std::move(by);
    parsed.push_back(std::move(grouping));
  }
  return ReportBuilder(std::move(parsed));
}

void ReportBuilder::Add(const TrajectoryFacts& trajectory) {
  TrajectoryView whole = WholeView(trajectory, samples_.Append(trajectory));
  LogSpeedups(trajectory, log_speedups_);
  whole.log_speedups = log_speedups_.data();
  total_.Add(whole);
  variance_.Add(trajectory);
  for (Grouping& grouping : groupings_) {
    key_.clear();
    AddCombinations(grouping, 0, whole);
  }
}

void ReportBuilder::AddCombinations(Grouping& grouping, size_t dimension,
                                    const TrajectoryView& view) {
  if (dimension == grouping.dimensions.size()) {
    AddToGroup(grouping, view);
    return;
  }
  const TrajectoryFacts& trajectory = *view.facts;
  const size_t key_size = key_.size();
  // Each value goes into the key as length:text, so no two combinations of
  // values share a key whatever their text holds.
  auto descend = [&](absl::string_view value, const TrajectoryView& next) {
    key_.resize(key_size);
    absl::StrAppend(&key_, value.size(), ":", value);
    values_[dimension] = value;
    AddCombinations(grouping, dimension + 1, next);
  };
  switch (grouping.dimensions[dimension]) {
    case Dimension::kModel:
      descend(trajectory.model, view);
      break;
    case Dimension::kTag:
      descend(trajectory.tag, view);
      break;
    case Dimension::kDefinition:
      descend(trajectory.definition, view);
      break;
    case Dimension::kCategory:
      // No category: the group "" (shown as "(none)"), so every trajectory
      // counts in the grouping.
      if (trajectory.categories.empty()) descend("", view);
      for (const std::string& category : trajectory.categories) descend(category, view);
      break;
    case Dimension::kTurn: {
      const int last = std::max(trajectory.num_turns, static_cast<int>(trajectory.turns.size()));
      for (int t = 1; t <= last; ++t) {
        turn_value_ = t;
        const absl::AlphaNum text(t);  // formats into its own buffer, no allocation
        TrajectoryView cut = CutView(trajectory, view.samples, t);
        cut.log_speedups = view.log_speedups;
        descend(text.Piece(), cut);
      }
      break;
    }
  }
  key_.resize(key_size);
}

void ReportBuilder::AddToGroup(Grouping& grouping, const TrajectoryView& view) {
  auto [it, inserted] = grouping.index.try_emplace(key_, grouping.groups.size());
  if (inserted) {
    Group& group = grouping.groups.emplace_back();
    for (size_t d = 0; d < grouping.dimensions.size(); ++d) {
      group.values.emplace_back(values_[d]);
    }
    group.turn = turn_value_;
  }
  grouping.groups[it->second].accumulator.Add(view);
}

void ReportBuilder::SortGroups(Grouping& grouping) {
  auto less = [&](const Group& a, const Group& b) {
    for (size_t d = 0; d < grouping.dimensions.size(); ++d) {
      if (grouping.dimensions[d] == Dimension::kTurn) {
        if (a.turn != b.turn) return a.turn < b.turn;
      } else if (a.values[d] != b.values[d]) {
        return a.values[d] < b.values[d];
      }
    }
    return false;
  };
  std::sort(grouping.groups.begin(), grouping.groups.end(), less);
}

v1::ExperimentReport ReportBuilder::Finish() {
  v1::ExperimentReport report;
  std::vector<int64_t> scratch;
  total_.Finish(samples_, scratch, report.mutable_total());
  variance_.Finish(report.mutable_correctness_variance());
  for (Grouping& grouping : groupings_) {
    SortGroups(grouping);
    v1::GroupingReport* out = report.add_groupings();
    for (const std::string& name : grouping.by) out->add_by(name);
    for (Group& group : grouping.groups) {
      v1::GroupReport* group_report = out->add_groups();
      for (size_t d = 0; d < grouping.by.size(); ++d) {
        (*group_report->mutable_key())[grouping.by[d]] = group.values[d];
      }
      group.accumulator.Finish(samples_, scratch, group_report);
    }
  }
  return report;
}

}  // namespace ptxbench::report
