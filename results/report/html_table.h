#ifndef PTXBENCH_RESULTS_REPORT_HTML_TABLE_H_
#define PTXBENCH_RESULTS_REPORT_HTML_TABLE_H_

// Parts of the HTML report (results/report/html.h) that its figures and its metrics
// tables share: tables, the formatting of numbers, the names of groups and
// the labels of simulated or scripted ones. Internal to report/html*.cc.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ptxbench/v1/report.pb.h"

namespace ptxbench::report::html {

struct Cell {
  // Implicit: rows list their numbers as plain strings.
  Cell(std::string text) : text(std::move(text)) {}  // NOLINT(google-explicit-constructor)
  Cell(std::string text, std::string css, std::vector<std::string> badges = {})
      : text(std::move(text)), css(std::move(css)), badges(std::move(badges)) {}

  std::string text;  // raw; escaped when rendered
  // A CSS class: "key" (left-aligned text), "" (a number, right-aligned).
  std::string css;
  // Raw text of a badge after the text ("SIMULATED", "scripted").
  std::vector<std::string> badges;
};

struct Table {
  std::vector<std::string> header;  // raw
  std::vector<std::vector<Cell>> rows;
  // How many columns on the left hold keys (left-aligned text).
  size_t key_columns = 1;
  // Rows from this index on are totals (set apart by a rule).
  size_t total_from = static_cast<size_t>(-1);
  std::string css;  // the <table>'s class
};

// A <table> in a horizontally scrolling wrapper, so a wide table never
// widens the page.
std::string RenderTable(const Table& table);

std::string FormatCount(int64_t n);      // 12345 -> "12,345"
std::string FormatPercent(double rate);  // 0.625 -> "62.5%"
std::string FormatUsd(double usd);
// "1.23×"; "—" when no kernel counted.
std::string FormatSpeedup(double speedup, int64_t count);
// "850 ms", "17.0 s"; "—" when `count` is 0.
std::string FormatMs(double ms, int64_t count);
// "62.5% (25)"
std::string RateAndCount(double rate, int64_t count);

// Its name, or its id when it has none.
std::string ExperimentName(const ptxbench::v1::ExperimentReport& experiment);

bool IsSimulated(const ptxbench::v1::GroupReport& group);
bool IsScripted(const ptxbench::v1::GroupReport& group);
// " (simulated)", " (scripted)", " (simulated, scripted)" or "".
std::string ProvenanceSuffix(const ptxbench::v1::GroupReport& group);
// The badges of a simulated or scripted group.
std::vector<std::string> ProvenanceBadges(const ptxbench::v1::GroupReport& group);

// The first cells of a metrics table's row: the group's value of each
// dimension of `by` ("all" for an experiment's total, whose key is empty;
// "—" for a dimension it lacks), the last with the group's provenance
// badges.
std::vector<Cell> KeyCells(const ptxbench::v1::GroupReport& group,
                           const std::vector<std::string>& by);

// The grouping whose `by` is exactly `by`, or null.
const ptxbench::v1::GroupingReport* FindGrouping(const ptxbench::v1::ExperimentReport& experiment,
                                                 const std::vector<std::string>& by);

// `by` as the report writes it: ["model", "tag"].
std::string GroupingName(const std::vector<std::string>& by);

}  // namespace ptxbench::report::html

#endif  // PTXBENCH_RESULTS_REPORT_HTML_TABLE_H_
