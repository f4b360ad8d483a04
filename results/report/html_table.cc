#include "results/report/html_table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "results/report/svg.h"

namespace ptxbench::report::html {

std::string RenderTable(const Table& table) {
  std::string out =
      absl::StrCat("<div class=\"table-wrap\"><table",
                   table.css.empty() ? "" : " class=\"" + table.css + "\"", "><thead><tr>");
  for (size_t i = 0; i < table.header.size(); ++i) {
    absl::StrAppend(&out, i < table.key_columns ? "<th class=\"key\">" : "<th>",
                    EscapeHtml(table.header[i]), "</th>");
  }
  absl::StrAppend(&out, "</tr></thead><tbody>");
  for (size_t r = 0; r < table.rows.size(); ++r) {
    absl::StrAppend(&out, r >= table.total_from ? "<tr class=\"total\">" : "<tr>");
    for (const Cell& c : table.rows[r]) {
      // A key never breaks; its badges may go below it.
      absl::StrAppend(&out, c.css.empty() ? "<td>" : "<td class=\"" + c.css + "\">",
                      c.css == "key" ? "<span class=\"k\">" + EscapeHtml(c.text) + "</span>"
                                     : EscapeHtml(c.text));
      for (const std::string& b : c.badges) {
        absl::StrAppend(&out, " <span class=\"badge", b == "SIMULATED" ? "" : " scripted", "\">",
                        EscapeHtml(b), "</span>");
      }
      absl::StrAppend(&out, "</td>");
    }
    absl::StrAppend(&out, "</tr>");
  }
  absl::StrAppend(&out, "</tbody></table></div>");
  return out;
}

std::string FormatCount(int64_t n) {
  std::string digits = absl::StrCat(n < 0 ? -static_cast<uint64_t>(n) : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string FormatPercent(double rate) {
  if (!std::isfinite(rate)) return "—";
  return absl::StrFormat("%.1f%%", rate * 100);
}

std::string FormatUsd(double usd) {
  if (!std::isfinite(usd)) return "—";
  if (usd == 0) return "$0";
  if (std::fabs(usd) >= 100) return absl::StrFormat("$%.0f", usd);
  if (std::fabs(usd) >= 1) return absl::StrFormat("$%.2f", usd);
  return absl::StrFormat("$%.4f", usd);
}

std::string FormatSpeedup(double speedup, int64_t count) {
  if (count <= 0 || !std::isfinite(speedup)) return "—";
  return absl::StrFormat("%.2f×", speedup);
}

std::string FormatMs(double ms, int64_t count) {
  if (count <= 0 || !std::isfinite(ms)) return "—";
  if (ms < 1000) return absl::StrFormat("%.0f ms", ms);
  return absl::StrFormat("%.1f s", ms / 1000);
}

std::string RateAndCount(double rate, int64_t count) {
  return absl::StrCat(FormatPercent(rate), " (", FormatCount(count), ")");
}

std::string ExperimentName(const ptxbench::v1::ExperimentReport& experiment) {
  return experiment.name().empty() ? experiment.experiment_id() : experiment.name();
}

bool IsSimulated(const ptxbench::v1::GroupReport& group) {
  return group.simulated_trajectories() > 0;
}

bool IsScripted(const ptxbench::v1::GroupReport& group) { return group.scripted_turns() > 0; }

std::string ProvenanceSuffix(const ptxbench::v1::GroupReport& group) {
  if (IsSimulated(group) && IsScripted(group)) return " (simulated, scripted)";
  if (IsSimulated(group)) return " (simulated)";
  if (IsScripted(group)) return " (scripted)";
  return "";
}

std::vector<std::string> ProvenanceBadges(const ptxbench::v1::GroupReport& group) {
  std::vector<std::string> badges;
  if (IsSimulated(group)) badges.push_back("SIMULATED");
  if (IsScripted(group)) badges.push_back("scripted");
  return badges;
}

const ptxbench::v1::GroupingReport* FindGrouping(const ptxbench::v1::ExperimentReport& experiment,
                                                 const std::vector<std::string>& by) {
  for (const auto& grouping : experiment.groupings()) {
    if (std::vector<std::string>(grouping.by().begin(), grouping.by().end()) == by) {
      return &grouping;
    }
  }
  return nullptr;
}

std::string GroupingName(const std::vector<std::string>& by) {
  return absl::StrCat("[",
                      absl::StrJoin(by, ", ",
                                    [](std::string* out, const std::string& d) {
                                      absl::StrAppend(out, "\"", d, "\"");
                                    }),
                      "]");
}

std::vector<Cell> KeyCells(const ptxbench::v1::GroupReport& g, const std::vector<std::string>& by) {
  std::vector<Cell> row;
  for (size_t i = 0; i < std::max<size_t>(1, by.size()); ++i) {
    std::string value = "all";
    if (!g.key().empty()) {
      auto it = i < by.size() ? g.key().find(by[i]) : g.key().end();
      value = it == g.key().end() ? "—" : it->second;
    } else if (i > 0) {
      value = "";
    }
    row.push_back({value, "key"});
  }
  row.back().badges = ProvenanceBadges(g);
  return row;
}

}  // namespace ptxbench::report::html
