#ifndef PTXBENCH_RESULTS_REPORT_SVG_H_
#define PTXBENCH_RESULTS_REPORT_SVG_H_

// The plot primitives of the HTML report (results/report/html.h): line, scatter,
// grouped-bar and stacked-bar charts drawn as inline SVG, with axes, ticks,
// a legend below the plot area and a <title>. Pure functions of their
// arguments; every text they take is raw (names from users) and is escaped
// here, so callers never escape.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench::report {

// `text` as HTML/SVG character data or a quoted attribute value: & < > " '
// escaped, control characters (which HTML does not allow) as U+FFFD.
std::string EscapeHtml(absl::string_view text);

// At most `max_chars` code points of UTF-8 `text`; a cut one ends in "…".
// Never splits a multi-byte character.
std::string Ellipsize(absl::string_view text, size_t max_chars);

struct Point {
  double x = 0;
  double y = 0;
};

enum class Marker { kCircle, kSquare, kTriangle, kDiamond };

// How one series is drawn; the figures give a model the same style in every
// plot, and an experiment its own dash pattern.
struct SeriesStyle {
  std::string color = "#0072B2";
  std::string dash;  // stroke-dasharray; empty: solid
  Marker marker = Marker::kCircle;
  bool hollow = false;  // markers drawn as outlines (simulated series)
};

struct Series {
  std::string label;  // raw; the legend shows it (shortened, full in a tooltip)
  SeriesStyle style;
  // Line and scatter plots: (x, y). Bar plots: y is the value of the i-th
  // category, x is unused.
  std::vector<Point> points;
  // Scatter only: a label beside each point (empty: none).
  std::vector<std::string> point_labels;
};

struct Axis {
  std::string label;
  double min = 0;
  double max = 1;
  // Tick labels end in "%".
  bool percent = false;
  // Ticks at integers only (turns).
  bool integer = false;
};

// What every plot has: a title (also the SVG's <title>), its axes and size in
// CSS pixels (the viewBox; the page scales it down on narrow screens). The
// legend's rows are added below `height`.
struct Frame {
  std::string title;
  Axis x;
  Axis y;
  int width = 560;
  int height = 320;
};

// Polylines with markers, x numeric.
std::string LinePlot(const Frame& frame, const std::vector<Series>& series);

// Points, each with its label; frame.x and frame.y give the ranges.
std::string ScatterPlot(const Frame& frame, const std::vector<Series>& series);

// One group of bars per category (frame.x is ignored but for its label), one
// bar per series in each group.
std::string GroupedBarPlot(const Frame& frame, const std::vector<std::string>& categories,
                           const std::vector<Series>& series);

// One bar per category, the series (layers) stacked bottom up in order.
std::string StackedBarPlot(const Frame& frame, const std::vector<std::string>& categories,
                           const std::vector<Series>& layers);

// Round tick values covering [lo, hi] (about `target` of them, steps of
// 1, 2 or 5 times a power of ten); `integer` keeps whole numbers only.
std::vector<double> NiceTicks(double lo, double hi, int target, bool integer);

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_SVG_H_
