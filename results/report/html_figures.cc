#include "results/report/html_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "results/report/html_table.h"
#include "results/report/svg.h"

namespace ptxbench::report::html {
namespace {

using ::ptxbench::v1::ExperimentReport;
using ::ptxbench::v1::GroupReport;
using ::ptxbench::v1::ReportResponse;

// Okabe & Ito's colour-blind-safe palette (its yellow, too light for lines,
// swapped for Tol's wine).
constexpr const char* kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                    "#D55E00", "#56B4E9", "#000000", "#882255"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
// One dash pattern per experiment, so a model keeps its colour across them.
constexpr const char* kDashes[] = {"", "7 4", "2 3", "9 3 2 3"};

// Outcome classes in stacking order (successes at the bottom), each with a
// fixed colour of the same palette: a class looks the same in every report.
struct OutcomeClass {
  const char* name;
  const char* color;
};
constexpr OutcomeClass kOutcomeClasses[] = {
    {"passed", "#009E73"},           {"compiled", "#56B4E9"},      {"incorrect", "#D55E00"},
    {"compile_error", "#E69F00"},    {"runtime_error", "#CC79A7"}, {"timeout", "#F0E442"},
    {"library_fallback", "#0072B2"}, {"infra_error", "#000000"},   {"no_kernel", "#999999"},
    {"pending", "#DDDDDD"}};
constexpr const char* kUnknownClassColor = "#BBBBBB";

// One plotted series: a group of one experiment, with its label and style.
struct Source {
  const ExperimentReport* experiment = nullptr;
  const GroupReport* group = nullptr;
  // The tables' key cells: the experiment's name (with several), then the
  // group's values.
  std::vector<std::string> key;
  std::string label;  // the legend's: the key joined, and the provenance
  SeriesStyle style;
};

struct Sources {
  std::vector<Source> sources;
  std::vector<std::string> missing;  // experiments without the grouping
  std::vector<std::string> header;   // the tables' key columns
};

SeriesStyle StyleFor(size_t color_index, size_t experiment_index, bool multi, bool simulated) {
  SeriesStyle style;
  style.color = kPalette[color_index % kPaletteSize];
  style.dash = kDashes[experiment_index % 4];
  style.marker = static_cast<Marker>((multi ? experiment_index : color_index) % 4);
  style.hollow = simulated;
  return style;
}

// The groups of grouping `by` of every experiment, coloured by their value
// of `color_by` (the same value, the same colour, in every experiment).
Sources SourcesOf(const ReportResponse& report, const std::vector<std::string>& by,
                  const std::string& color_by) {
  const bool multi = report.experiments_size() > 1;
  std::set<std::string> values;
  for (const ExperimentReport& e : report.experiments()) {
    if (const auto* g = FindGrouping(e, by)) {
      for (const GroupReport& group : g->groups()) {
        auto it = group.key().find(color_by);
        values.insert(it == group.key().end() ? "" : it->second);
      }
    }
  }
  const std::vector<std::string> ordered(values.begin(), values.end());
  Sources out;
  if (multi) out.header.push_back("experiment");
  out.header.insert(out.header.end(), by.begin(), by.end());
  for (int i = 0; i < report.experiments_size(); ++i) {
    const ExperimentReport& e = report.experiments(i);
    const auto* grouping = FindGrouping(e, by);
    if (grouping == nullptr) {
      out.missing.push_back(ExperimentName(e));
      continue;
    }
    for (const GroupReport& group : grouping->groups()) {
      auto it = group.key().find(color_by);
      std::string value = it == group.key().end() ? "" : it->second;
      size_t color = std::lower_bound(ordered.begin(), ordered.end(), value) - ordered.begin();
      Source s;
      s.experiment = &e;
      s.group = &group;
      if (multi) s.key.push_back(ExperimentName(e));
      for (const std::string& dim : by) {
        auto value = group.key().find(dim);
        s.key.push_back(value == group.key().end() ? "—" : value->second);
      }
      s.label = absl::StrJoin(s.key, " / ") + ProvenanceSuffix(group);
      s.style = StyleFor(color, i, multi, IsSimulated(group));
      out.sources.push_back(std::move(s));
    }
  }
  return out;
}

// The experiments' totals as sources (for figures that fall back on them).
Sources TotalsOf(const ReportResponse& report) {
  Sources out;
  out.header = {"experiment"};
  const bool multi = report.experiments_size() > 1;
  for (int i = 0; i < report.experiments_size(); ++i) {
    const ExperimentReport& e = report.experiments(i);
    Source s;
    s.experiment = &e;
    s.group = &e.total();
    s.key = {multi ? ExperimentName(e) : "all"};
    s.label = s.key[0] + ProvenanceSuffix(e.total());
    s.style = StyleFor(i, i, multi, IsSimulated(e.total()));
    out.sources.push_back(std::move(s));
  }
  return out;
}

// A plot's title, saying when simulated or scripted numbers are in it.
std::string Title(std::string title, const std::vector<const GroupReport*>& groups) {
  bool simulated = false, scripted = false;
  for (const GroupReport* g : groups) {
    simulated |= IsSimulated(*g);
    scripted |= IsScripted(*g);
  }
  if (simulated) absl::StrAppend(&title, " — includes SIMULATED");
  if (scripted) absl::StrAppend(&title, simulated ? ", scripted" : " — includes scripted");
  return title;
}

std::string Title(std::string title, const Sources& s) {
  std::vector<const GroupReport*> groups;
  for (const Source& src : s.sources) groups.push_back(src.group);
  return Title(std::move(title), groups);
}

std::vector<Cell> KeyCells(const Source& s) {
  std::vector<Cell> cells;
  for (const std::string& k : s.key) cells.push_back(Cell{k, "key"});
  cells.back().badges = ProvenanceBadges(*s.group);
  return cells;
}

// A figure's table with its header: the key columns, then `columns`.
Table KeyedTable(const Sources& s, const std::vector<std::string>& columns) {
  Table table;
  table.header = s.header;
  table.header.insert(table.header.end(), columns.begin(), columns.end());
  table.key_columns = s.header.size();
  return table;
}

std::string MissingNote(const std::vector<std::string>& by,
                        const std::vector<std::string>& missing) {
  if (missing.empty()) return "";
  return absl::StrCat("<p class=\"note\">Not shown for ", EscapeHtml(absl::StrJoin(missing, ", ")),
                      ": the report has no grouping ", EscapeHtml(GroupingName(by)), ".</p>");
}

// `css` "fig wide": the figure spans the grid (for a wide table).
std::string Figure(const std::string& svg, const std::string& caption, const std::string& note,
                   const Table& table, absl::string_view css = "fig") {
  return absl::StrCat("<figure class=\"", css, "\">", svg, "<figcaption>", EscapeHtml(caption),
                      "</figcaption>", note, RenderTable(table), "</figure>");
}

// What stands in for a figure whose grouping is absent from every experiment.
std::string Absent(const std::string& title, const std::vector<std::string>& by) {
  return absl::StrCat("<figure class=\"fig missing\"><p class=\"fig-title\">", EscapeHtml(title),
                      "</p><p class=\"note\">Not shown: the report has no grouping ",
                      EscapeHtml(GroupingName(by)),
                      " (ask for it with the report's groupings).</p></figure>");
}

std::string PassAtTurnFigure(const ReportResponse& report, const std::string& dim) {
  const std::vector<std::string> by = {dim};
  const std::string title = "Pass@turn per " + dim;
  Sources s = SourcesOf(report, by, dim);
  if (s.sources.empty()) return Absent(title, by);
  int max_turn = 1;
  for (const Source& src : s.sources) {
    for (const auto& p : src.group->pass_at_turn()) max_turn = std::max(max_turn, p.turn());
  }
  std::vector<Series> series;
  Table table = KeyedTable(s, {"n"});
  for (int t = 1; t <= max_turn; ++t) table.header.push_back(absl::StrCat("pass@", t));
  for (const Source& src : s.sources) {
    Series line{src.label, src.style, {}, {}};
    std::vector<Cell> row = KeyCells(src);
    row.push_back(FormatCount(src.group->trajectories()));
    const size_t first = row.size();
    row.resize(first + max_turn, Cell("—"));
    for (const auto& p : src.group->pass_at_turn()) {
      line.points.push_back({static_cast<double>(p.turn()), p.rate() * 100});
      if (p.turn() >= 1 && p.turn() <= max_turn)
        row[first + p.turn() - 1] = FormatPercent(p.rate());
    }
    series.push_back(std::move(line));
    table.rows.push_back(std::move(row));
  }
  Frame frame{Title(title, s),
              {"turn t", 1, static_cast<double>(max_turn), false, true},
              {"correct by turn t", 0, 100, true, false}};
  return Figure(LinePlot(frame, series),
                "Share of trajectories with a correct kernel at a turn ≤ t (pass@t).",
                MissingNote(by, s.missing), table);
}

std::string FastPFigure(const ReportResponse& report) {
  const std::vector<std::string> by = {"model"};
  const std::string title = "fast_p per model";
  Sources s = SourcesOf(report, by, "model");
  if (s.sources.empty()) return Absent(title, by);
  std::set<double> ps(report.fast_p_thresholds().begin(), report.fast_p_thresholds().end());
  for (const Source& src : s.sources) {
    for (const auto& f : src.group->fast_p()) ps.insert(f.p());
  }
  if (ps.empty()) ps = {0, 1};
  const std::vector<double> thresholds(ps.begin(), ps.end());
  std::vector<Series> series;
  Table table = KeyedTable(s, {});
  for (double p : thresholds) table.header.push_back(absl::StrFormat("fast_%g", p));
  for (const Source& src : s.sources) {
    Series line{src.label, src.style, {}, {}};
    std::vector<Cell> row = KeyCells(src);
    const size_t first = row.size();
    row.resize(first + thresholds.size(), Cell("—"));
    for (const auto& f : src.group->fast_p()) {
      line.points.push_back({f.p(), f.rate() * 100});
      size_t i = std::lower_bound(thresholds.begin(), thresholds.end(), f.p()) - thresholds.begin();
      row[first + i] = FormatPercent(f.rate());
    }
    series.push_back(std::move(line));
    table.rows.push_back(std::move(row));
  }
  Frame frame{Title(title, s),
              {"p (speedup over the reference)", thresholds.front(), thresholds.back()},
              {"correct and > p× as fast", 0, 100, true, false}};
  return Figure(LinePlot(frame, series),
                "Share of trajectories whose best correct kernel is more than p times as fast as "
                "the reference (fast_p).",
                MissingNote(by, s.missing), table);
}

std::string BinLabel(double lo, double hi) {
  if (hi <= 0) return absl::StrFormat("≥ %.2g×", lo);
  if (lo <= 0) return absl::StrFormat("< %.2g×", hi);
  return absl::StrFormat("%.2g–%.2g×", lo, hi);
}

std::string SpeedupFigure(const ReportResponse& report) {
  const std::vector<std::string> by = {"model"};
  Sources s = SourcesOf(report, by, "model");
  // Per model when the report has that grouping, else each experiment's total.
  bool per_model = !s.sources.empty();
  if (!per_model) s = TotalsOf(report);
  const Source* widest = &s.sources.front();
  for (const Source& src : s.sources) {
    if (src.group->speedup_histogram_size() > widest->group->speedup_histogram_size())
      widest = &src;
  }
  // Only the bins from the first to the last that any series fills: the
  // fourteen half-octaves of the histogram do not fit a plot's width or a
  // table's, and the empty ones at either end say nothing.
  const int all_bins = widest->group->speedup_histogram_size();
  int first = all_bins, last = -1;
  for (const Source& src : s.sources) {
    for (int i = 0; i < src.group->speedup_histogram_size(); ++i) {
      if (src.group->speedup_histogram(i).count() == 0) continue;
      first = std::min(first, i);
      last = std::max(last, i);
    }
  }
  if (last < 0) first = 0, last = all_bins - 1;
  std::vector<std::string> bins;
  for (int i = first; i <= last; ++i) {
    const auto& b = widest->group->speedup_histogram(i);
    bins.push_back(BinLabel(b.lo(), b.hi()));
  }
  std::vector<Series> series;
  Table table = KeyedTable(s, bins);
  double max_count = 1;
  for (const Source& src : s.sources) {
    Series bars{src.label, src.style, {}, {}};
    std::vector<Cell> row = KeyCells(src);
    for (size_t i = 0; i < bins.size(); ++i) {
      const int bin = first + static_cast<int>(i);
      int64_t count = bin < src.group->speedup_histogram_size()
                          ? src.group->speedup_histogram(bin).count()
                          : 0;
      bars.points.push_back({static_cast<double>(i), static_cast<double>(count)});
      max_count = std::max(max_count, static_cast<double>(count));
      row.push_back({FormatCount(count)});
    }
    series.push_back(std::move(bars));
    table.rows.push_back(std::move(row));
  }
  Frame frame{Title(per_model ? "Speedups per model" : "Speedups", s),
              {"speedup of the best correct kernel"},
              {"trajectories", 0, max_count, false, true}};
  return Figure(GroupedBarPlot(frame, bins, series),
                "Trajectories with a correct kernel, by the speedup of their best one over the "
                "reference (the geometric mean over its workloads).",
                per_model ? MissingNote(by, s.missing) : "", table);
}

std::string OutcomesFigure(const ExperimentReport& e, bool multi) {
  const GroupReport& total = e.total();
  std::string title =
      Title(absl::StrCat("Outcomes by turn", multi ? " — " + ExperimentName(e) : ""), {&total});
  std::vector<std::string> turns;
  std::map<std::string, std::vector<int64_t>> counts;  // class -> per turn
  for (int t = 0; t < total.outcomes_by_turn_size(); ++t) {
    turns.push_back(absl::StrCat(total.outcomes_by_turn(t).turn() + 1));
    for (const auto& [cls, n] : total.outcomes_by_turn(t).classes()) {
      auto& v = counts[cls];
      v.resize(total.outcomes_by_turn_size(), 0);
      v[t] = n;
    }
  }
  if (turns.empty()) {
    return absl::StrCat("<figure class=\"fig missing\"><p class=\"fig-title\">", EscapeHtml(title),
                        "</p><p class=\"note\">No turn has an outcome yet.</p></figure>");
  }
  std::vector<std::pair<std::string, std::string>> order;  // class, colour
  for (const OutcomeClass& c : kOutcomeClasses) {
    if (counts.count(c.name)) order.push_back({c.name, c.color});
  }
  for (const auto& entry : counts) {
    const std::string& cls = entry.first;
    if (std::none_of(std::begin(kOutcomeClasses), std::end(kOutcomeClasses),
                     [&](const OutcomeClass& c) { return cls == c.name; })) {
      order.push_back({cls, kUnknownClassColor});
    }
  }
  std::vector<Series> layers;
  Table table;
  table.header = {"outcome"};
  for (const std::string& t : turns) table.header.push_back("turn " + t);
  std::vector<int64_t> sums(turns.size(), 0);
  for (const auto& [cls, color] : order) {
    SeriesStyle style;
    style.color = color;
    // Solid even when simulated: a class keeps its colour; the title and
    // the table say simulated.
    Series layer{absl::StrReplaceAll(cls, {{"_", " "}}), style, {}, {}};
    std::vector<Cell> row = {{layer.label, "key"}};
    for (size_t t = 0; t < turns.size(); ++t) {
      int64_t n = counts[cls][t];
      layer.points.push_back({static_cast<double>(t), static_cast<double>(n)});
      sums[t] += n;
      row.push_back({FormatCount(n)});
    }
    layers.push_back(std::move(layer));
    table.rows.push_back(std::move(row));
  }
  std::vector<Cell> total_row = {{"all", "key", ProvenanceBadges(total)}};
  for (int64_t n : sums) total_row.push_back({FormatCount(n)});
  table.total_from = table.rows.size();
  table.rows.push_back(std::move(total_row));
  double max_sum = std::max<double>(1, *std::max_element(sums.begin(), sums.end()));
  Frame frame{title, {"turn"}, {"turns", 0, max_sum, false, true}};
  return Figure(StackedBarPlot(frame, turns, layers),
                "The outcome of every turn, by turn: the trajectories still running at that turn.",
                "", table);
}

std::string CostFigure(const ReportResponse& report) {
  std::vector<std::string> by = {"model", "tag"};
  const std::string title = "Cost against correct rate";
  Sources s = SourcesOf(report, by, "model");
  if (s.sources.empty()) {
    by = {"model"};
    s = SourcesOf(report, by, "model");
  }
  if (s.sources.empty()) return Absent(title, {"model", "tag"});
  // One series per (experiment, model): its points are the model's tags.
  std::vector<Series> series;
  std::vector<GroupReport> provenance;  // per series: its simulated and scripted counts
  std::map<std::pair<const ExperimentReport*, std::string>, size_t> index;
  Table table = KeyedTable(s, {"n", "correct", "cost", "$ / trajectory", "$ / correct"});
  double min_cost = std::numeric_limits<double>::infinity(), max_cost = 0, min_rate = 100,
         max_rate = 0;
  for (const Source& src : s.sources) {
    const GroupReport& g = *src.group;
    const std::string model = g.key().count("model") ? g.key().at("model") : "";
    auto [it, added] = index.insert({{src.experiment, model}, series.size()});
    if (added) {
      std::string name =
          report.experiments_size() > 1 ? ExperimentName(*src.experiment) + " / " + model : model;
      series.push_back(Series{name, src.style, {}, {}});
      provenance.emplace_back();
    }
    Series& line = series[it->second];
    GroupReport& seen = provenance[it->second];
    seen.set_simulated_trajectories(seen.simulated_trajectories() + g.simulated_trajectories());
    seen.set_scripted_turns(seen.scripted_turns() + g.scripted_turns());
    double per_trajectory = g.trajectories() > 0 ? g.cost_usd() / g.trajectories() : 0;
    min_cost = std::min(min_cost, per_trajectory);
    max_cost = std::max(max_cost, per_trajectory);
    min_rate = std::min(min_rate, g.correct_rate() * 100);
    max_rate = std::max(max_rate, g.correct_rate() * 100);
    line.points.push_back({per_trajectory, g.correct_rate() * 100});
    line.point_labels.push_back(by.size() > 1 ? g.key().at("tag") : model);
    std::vector<Cell> row = KeyCells(src);
    row.insert(row.end(),
               {FormatCount(g.trajectories()), RateAndCount(g.correct_rate(), g.correct()),
                FormatUsd(g.cost_usd()), FormatUsd(per_trajectory),
                g.correct() > 0 ? FormatUsd(g.cost_per_correct_usd()) : "—"});
    table.rows.push_back(std::move(row));
  }
  for (size_t i = 0; i < series.size(); ++i) {
    series[i].label += ProvenanceSuffix(provenance[i]);
    series[i].style.hollow = IsSimulated(provenance[i]);
  }
  // The axes span the points (not from 0), so that close ones stay apart.
  const double cost_pad = std::max((max_cost - min_cost) * 0.12, max_cost * 0.05);
  Frame frame{
      Title(title, s),
      {"model cost per trajectory (USD)", std::max(0.0, min_cost - cost_pad), max_cost + cost_pad},
      {"correct", std::max(0.0, min_rate - 5), std::min(100.0, max_rate + 5), true, false}};
  return Figure(ScatterPlot(frame, series),
                absl::StrCat("Correct rate against what the model calls cost, one point per ",
                             by.size() > 1 ? "model and tag" : "model", "."),
                MissingNote(by, s.missing), table, "fig wide");
}

}  // namespace

std::string Figures(const ReportResponse& report) {
  if (report.experiments_size() == 0) return "";
  std::string out = absl::StrCat(PassAtTurnFigure(report, "model"), PassAtTurnFigure(report, "tag"),
                                 FastPFigure(report), SpeedupFigure(report));
  for (const ExperimentReport& e : report.experiments()) {
    absl::StrAppend(&out, OutcomesFigure(e, report.experiments_size() > 1));
  }
  absl::StrAppend(&out, CostFigure(report));
  return out;
}

}  // namespace ptxbench::report::html
