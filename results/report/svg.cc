#include "results/report/svg.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace ptxbench::report {
namespace {

// Space around the plot area: the title above, tick labels and the axis
// labels left and below.
constexpr double kLeft = 58;
constexpr double kRight = 16;
constexpr double kTop = 34;
constexpr double kBottom = 46;
constexpr double kLegendRow = 18;
// Longest legend label before it is shortened (the full one is a tooltip and
// in the figure's table).
constexpr size_t kLegendChars = 60;
// About how wide a character of the 11px font is; text is laid out from it
// because there is no script to measure it.
constexpr double kCharWidth = 6.2;
constexpr double kTitleCharWidth = 7.4;  // 13px, bold

constexpr absl::string_view kAxisColor = "#444";
constexpr absl::string_view kGridColor = "#e3e3e3";

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

std::string Num(double v) { return absl::StrFormat("%.1f", v); }

std::string TickLabel(double v, double step, bool percent) {
  int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  if (std::fabs(v) < step * 1e-6) v = 0;  // no "-0"
  return absl::StrCat(absl::StrFormat("%.*f", decimals, v), percent ? "%" : "");
}

std::string Attr(absl::string_view name, absl::string_view value) {
  return value.empty() ? "" : absl::StrCat(" ", name, "=\"", EscapeHtml(value), "\"");
}

enum class Swatch { kLine, kPoint, kBox };

std::string MarkerShape(const SeriesStyle& style, double x, double y, double r) {
  std::string paint =
      style.hollow ? absl::StrCat("fill=\"#fff\" stroke=\"", style.color, "\" stroke-width=\"1.5\"")
                   : absl::StrCat("fill=\"", style.color, "\"");
  switch (style.marker) {
    case Marker::kSquare:
      return absl::StrCat("<rect x=\"", Num(x - r), "\" y=\"", Num(y - r), "\" width=\"",
                          Num(2 * r), "\" height=\"", Num(2 * r), "\" ", paint, "/>");
    case Marker::kTriangle:
      return absl::StrCat("<path d=\"M", Num(x), " ", Num(y - r * 1.2), "L", Num(x + r * 1.1), " ",
                          Num(y + r * 0.8), "L", Num(x - r * 1.1), " ", Num(y + r * 0.8), "Z\" ",
                          paint, "/>");
    case Marker::kDiamond:
      return absl::StrCat("<path d=\"M", Num(x), " ", Num(y - r * 1.3), "L", Num(x + r * 1.1), " ",
                          Num(y), "L", Num(x), " ", Num(y + r * 1.3), "L", Num(x - r * 1.1), " ",
                          Num(y), "Z\" ", paint, "/>");
    case Marker::kCircle:
      break;
  }
  return absl::StrCat("<circle cx=\"", Num(x), "\" cy=\"", Num(y), "\" r=\"", Num(r), "\" ", paint,
                      "/>");
}

std::string BarPaint(const SeriesStyle& style) {
  // Simulated bars are washed out with an outline, so they read as
  // different even in grey print.
  if (style.hollow) {
    return absl::StrCat("fill=\"", style.color, "\" fill-opacity=\"0.3\" stroke=\"", style.color,
                        "\" stroke-dasharray=\"3 2\"");
  }
  return absl::StrCat("fill=\"", style.color, "\"");
}

// A bar of `series` with a tooltip naming it, its category and value.
std::string Bar(double x, double y, double width, double height, const Series& series,
                absl::string_view category, double value) {
  return absl::StrCat("<rect x=\"", Num(x), "\" y=\"", Num(y), "\" width=\"", Num(width),
                      "\" height=\"", Num(height), "\" ", BarPaint(series.style), "><title>",
                      EscapeHtml(series.label), " · ", EscapeHtml(category), ": ",
                      absl::StrFormat("%g", value), "</title></rect>");
}

// One SVG plot being drawn: maps data to pixels, draws the frame's axes,
// and closes with the legend.
class Canvas {
 public:
  Canvas(const Frame& frame, const std::vector<Series>& legend, Swatch swatch)
      : frame_(frame), legend_(legend), swatch_(swatch) {
    SplitTitle();
    x_ticks_ = NiceTicks(frame.x.min, frame.x.max, 6, frame.x.integer);
    y_ticks_ = NiceTicks(frame.y.min, frame.y.max, 5, frame.y.integer);
    x_lo_ = x_ticks_.front();
    x_hi_ = x_ticks_.back();
    y_lo_ = y_ticks_.front();
    y_hi_ = y_ticks_.back();
    LayOutLegend();
    int full_height =
        frame.height + static_cast<int>(legend_rows_ * kLegendRow) + (legend_rows_ > 0 ? 6 : 0);
    absl::StrAppend(&svg_, "<svg class=\"plot\" role=\"img\" viewBox=\"0 0 ", frame.width, " ",
                    full_height, "\" width=\"", frame.width, "\" height=\"", full_height,
                    "\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\""
                    " font-size=\"11\"><title>",
                    EscapeHtml(frame.title), "</title>");
    DrawTitle();
  }

  double left() const { return kLeft; }
  double right() const { return frame_.width - kRight; }
  // A two-line title pushes the plot area down.
  double top() const { return kTop + (title_[1].empty() ? 0 : 16); }
  double bottom() const { return frame_.height - kBottom; }

  double X(double v) const {
    v = std::clamp(std::isfinite(v) ? v : x_lo_, x_lo_, x_hi_);
    return left() + (v - x_lo_) / (x_hi_ - x_lo_) * (right() - left());
  }
  double Y(double v) const {
    v = std::clamp(std::isfinite(v) ? v : y_lo_, y_lo_, y_hi_);
    return bottom() - (v - y_lo_) / (y_hi_ - y_lo_) * (bottom() - top());
  }

  void Append(absl::string_view s) { absl::StrAppend(&svg_, s); }

  // Horizontal grid lines and the y axis with its ticks and label.
  void DrawYAxis() {
    double step = y_ticks_.size() > 1 ? y_ticks_[1] - y_ticks_[0] : 1;
    for (double t : y_ticks_) {
      double y = Y(t);
      absl::StrAppend(&svg_, "<line x1=\"", Num(left()), "\" x2=\"", Num(right()), "\" y1=\"",
                      Num(y), "\" y2=\"", Num(y), "\" stroke=\"", kGridColor, "\"/>", "<text x=\"",
                      Num(left() - 6), "\" y=\"", Num(y + 3.5), "\" text-anchor=\"end\">",
                      TickLabel(t, step, frame_.y.percent), "</text>");
    }
    double mid = (top() + bottom()) / 2;
    absl::StrAppend(&svg_, "<line x1=\"", Num(left()), "\" x2=\"", Num(left()), "\" y1=\"",
                    Num(top()), "\" y2=\"", Num(bottom()), "\" stroke=\"", kAxisColor, "\"/>",
                    "<text transform=\"translate(14 ", Num(mid),
                    ") rotate(-90)\" text-anchor=\"middle\">", EscapeHtml(frame_.y.label),
                    "</text>");
  }

  // The x axis with numeric ticks.
  void DrawXAxis() {
    double step = x_ticks_.size() > 1 ? x_ticks_[1] - x_ticks_[0] : 1;
    std::vector<std::string> labels;
    std::vector<double> positions;
    for (double t : x_ticks_) {
      labels.push_back(TickLabel(t, step, frame_.x.percent));
      positions.push_back(X(t));
    }
    DrawXLine(labels, positions);
  }

  // The x axis with one label per category, centred in its band.
  void DrawCategoryAxis(const std::vector<std::string>& categories) {
    std::vector<double> positions;
    for (size_t i = 0; i < categories.size(); ++i) positions.push_back(BandCenter(i, categories));
    double band = (right() - left()) / std::max<size_t>(1, categories.size());
    std::vector<std::string> labels;
    for (const std::string& c : categories) {
      labels.push_back(Ellipsize(c, std::max<size_t>(3, static_cast<size_t>(band / kCharWidth))));
    }
    DrawXLine(labels, positions);
  }

  double BandCenter(size_t i, const std::vector<std::string>& categories) const {
    double band = (right() - left()) / std::max<size_t>(1, categories.size());
    return left() + band * (i + 0.5);
  }

  std::string Finish() {
    DrawLegend();
    absl::StrAppend(&svg_, "</svg>");
    return std::move(svg_);
  }

 private:
  void DrawXLine(const std::vector<std::string>& labels, const std::vector<double>& positions) {
    absl::StrAppend(&svg_, "<line x1=\"", Num(left()), "\" x2=\"", Num(right()), "\" y1=\"",
                    Num(bottom()), "\" y2=\"", Num(bottom()), "\" stroke=\"", kAxisColor, "\"/>");
    for (size_t i = 0; i < labels.size(); ++i) {
      absl::StrAppend(&svg_, "<line x1=\"", Num(positions[i]), "\" x2=\"", Num(positions[i]),
                      "\" y1=\"", Num(bottom()), "\" y2=\"", Num(bottom() + 4), "\" stroke=\"",
                      kAxisColor, "\"/><text x=\"", Num(positions[i]), "\" y=\"",
                      Num(bottom() + 16), "\" text-anchor=\"middle\">", EscapeHtml(labels[i]),
                      "</text>");
    }
    absl::StrAppend(&svg_, "<text x=\"", Num((left() + right()) / 2), "\" y=\"", Num(bottom() + 36),
                    "\" text-anchor=\"middle\">", EscapeHtml(frame_.x.label), "</text>");
  }

  // The title on one line, or two when it is too long (broken at a space),
  // shortened past that; the full one is the <title>.
  void SplitTitle() {
    const size_t line_chars = static_cast<size_t>((frame_.width - 16) / kTitleCharWidth);
    title_[0] = frame_.title;
    if (title_[0].size() > line_chars) {
      size_t space = title_[0].rfind(' ', line_chars);
      if (space != std::string::npos && space > line_chars / 2) {
        title_[1] = Ellipsize(title_[0].substr(space + 1), line_chars);
        title_[0].resize(space);
      }
    }
    title_[0] = Ellipsize(title_[0], line_chars);
  }

  void DrawTitle() {
    absl::StrAppend(&svg_, "<text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"600\">",
                    EscapeHtml(title_[0]));
    if (!title_[1].empty()) {
      absl::StrAppend(&svg_, "<tspan x=\"8\" dy=\"16\">", EscapeHtml(title_[1]), "</tspan>");
    }
    absl::StrAppend(&svg_, "</text>");
  }

  void LayOutLegend() {
    size_t longest = 0;
    for (const Series& s : legend_) {
      longest = std::max(longest, Ellipsize(s.label, kLegendChars).size());
    }
    entry_width_ = std::min<double>(frame_.width - 16, longest * kCharWidth + 34);
    columns_ = std::max(1, static_cast<int>((frame_.width - 16) / entry_width_));
    legend_rows_ = static_cast<int>((legend_.size() + columns_ - 1) / columns_);
  }

  void DrawLegend() {
    for (size_t i = 0; i < legend_.size(); ++i) {
      const Series& s = legend_[i];
      double x = 8 + (i % columns_) * entry_width_;
      double y = frame_.height + 6 + (i / columns_) * kLegendRow + kLegendRow / 2;
      absl::StrAppend(&svg_, "<g><title>", EscapeHtml(s.label), "</title>");
      switch (swatch_) {
        case Swatch::kLine:
          absl::StrAppend(&svg_, "<line x1=\"", Num(x), "\" x2=\"", Num(x + 22), "\" y1=\"", Num(y),
                          "\" y2=\"", Num(y), "\" stroke=\"", s.style.color,
                          "\" stroke-width=\"2\"", Attr("stroke-dasharray", s.style.dash), "/>",
                          MarkerShape(s.style, x + 11, y, 3.5));
          break;
        case Swatch::kPoint:
          absl::StrAppend(&svg_, MarkerShape(s.style, x + 11, y, 4.5));
          break;
        case Swatch::kBox:
          absl::StrAppend(&svg_, "<rect x=\"", Num(x + 5), "\" y=\"", Num(y - 6),
                          "\" width=\"12\" height=\"12\" ", BarPaint(s.style), "/>");
          break;
      }
      absl::StrAppend(&svg_, "<text x=\"", Num(x + 28), "\" y=\"", Num(y + 4), "\">",
                      EscapeHtml(Ellipsize(s.label, kLegendChars)), "</text></g>");
    }
  }

  const Frame& frame_;
  const std::vector<Series>& legend_;
  Swatch swatch_;
  std::vector<double> x_ticks_;
  std::vector<double> y_ticks_;
  double x_lo_ = 0, x_hi_ = 1, y_lo_ = 0, y_hi_ = 1;
  double entry_width_ = 100;
  int columns_ = 1;
  int legend_rows_ = 0;
  std::string title_[2];  // its lines; the second may be empty
  std::string svg_;
};

}  // namespace

std::string EscapeHtml(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
      case '\n':
      case '\r':
        out += c;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          out += "\xEF\xBF\xBD";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string Ellipsize(absl::string_view text, size_t max_chars) {
  if (max_chars == 0) return "";
  size_t chars = 0;
  size_t cut = text.size();
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsContinuation(static_cast<unsigned char>(text[i]))) continue;
    if (chars == max_chars - 1 && cut == text.size()) cut = i;
    if (++chars > max_chars) return absl::StrCat(text.substr(0, cut), "…");
  }
  return std::string(text);
}

std::vector<double> NiceTicks(double lo, double hi, int target, bool integer) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo < 1e-12) hi = lo + (integer ? 1 : std::max(1.0, std::fabs(lo) * 0.1));
  double raw = (hi - lo) / std::max(1, target);
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / magnitude;
  double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
  if (integer) step = std::max(1.0, std::round(step));
  double start = std::floor(lo / step + 1e-9) * step;
  std::vector<double> ticks;
  for (int i = 0; i < 64; ++i) {
    double v = start + i * step;
    ticks.push_back(v);
    if (v >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string LinePlot(const Frame& frame, const std::vector<Series>& series) {
  Canvas canvas(frame, series, Swatch::kLine);
  canvas.DrawYAxis();
  canvas.DrawXAxis();
  for (const Series& s : series) {
    std::string points;
    for (const Point& p : s.points) {
      absl::StrAppend(&points, points.empty() ? "" : " ", Num(canvas.X(p.x)), ",",
                      Num(canvas.Y(p.y)));
    }
    canvas.Append(absl::StrCat("<g><title>", EscapeHtml(s.label), "</title><polyline points=\"",
                               points, "\" fill=\"none\" stroke=\"", s.style.color,
                               "\" stroke-width=\"2\"", Attr("stroke-dasharray", s.style.dash),
                               "/>"));
    for (const Point& p : s.points) {
      canvas.Append(MarkerShape(s.style, canvas.X(p.x), canvas.Y(p.y), 3.5));
    }
    canvas.Append("</g>");
  }
  return canvas.Finish();
}

std::string ScatterPlot(const Frame& frame, const std::vector<Series>& series) {
  Canvas canvas(frame, series, Swatch::kPoint);
  canvas.DrawYAxis();
  canvas.DrawXAxis();
  struct Box {
    double x0, y0, x1, y1;
    bool Overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  };
  std::vector<Box> taken;  // markers and placed labels
  for (const Series& s : series) {
    for (const Point& p : s.points) {
      double x = canvas.X(p.x), y = canvas.Y(p.y);
      taken.push_back({x - 5, y - 5, x + 5, y + 5});
      canvas.Append(MarkerShape(s.style, x, y, 5));
    }
  }
  // Each label goes to the first spot around its point that overlaps no
  // marker and no earlier label (points on the right prefer their left).
  const double flip_at = canvas.left() + (canvas.right() - canvas.left()) * 0.62;
  for (const Series& s : series) {
    for (size_t i = 0; i < s.points.size() && i < s.point_labels.size(); ++i) {
      if (s.point_labels[i].empty()) continue;
      const std::string text = Ellipsize(s.point_labels[i], 34);
      const double x = canvas.X(s.points[i].x), y = canvas.Y(s.points[i].y);
      const double w = text.size() * 5.6;
      const bool prefer_left = x > flip_at;
      Box chosen{};
      bool left = prefer_left;
      bool placed = false;
      for (int attempt = 0; attempt < 12 && !placed; ++attempt) {
        left = (attempt % 2 == 0) == prefer_left;
        static constexpr double kDy[] = {-6, 14, -18, 26, -30, 38};
        double baseline = y + kDy[attempt / 2];
        double x0 = left ? x - 8 - w : x + 8;
        chosen = {x0, baseline - 9, x0 + w, baseline + 2};
        placed = chosen.x0 >= canvas.left() && chosen.x1 <= canvas.right() + 12 &&
                 chosen.y0 >= canvas.top() - 12 && chosen.y1 <= canvas.bottom() &&
                 std::none_of(taken.begin(), taken.end(),
                              [&](const Box& b) { return b.Overlaps(chosen); });
      }
      if (!placed) {  // crowded: the first spot, overlapping
        left = prefer_left;
        const double x0 = left ? x - 8 - w : x + 8;
        chosen = {x0, y - 15, x0 + w, y - 4};
      }
      taken.push_back(chosen);
      canvas.Append(absl::StrCat("<text x=\"", Num(left ? chosen.x0 + w : chosen.x0), "\" y=\"",
                                 Num(chosen.y0 + 9), "\" font-size=\"10\"",
                                 left ? " text-anchor=\"end\"" : "", ">", EscapeHtml(text),
                                 "</text>"));
    }
  }
  return canvas.Finish();
}

std::string GroupedBarPlot(const Frame& frame, const std::vector<std::string>& categories,
                           const std::vector<Series>& series) {
  Canvas canvas(frame, series, Swatch::kBox);
  canvas.DrawYAxis();
  canvas.DrawCategoryAxis(categories);
  double band = (canvas.right() - canvas.left()) / std::max<size_t>(1, categories.size());
  double bar = band * 0.8 / std::max<size_t>(1, series.size());
  for (size_t c = 0; c < categories.size(); ++c) {
    double x0 = canvas.BandCenter(c, categories) - band * 0.4;
    for (size_t k = 0; k < series.size(); ++k) {
      if (c >= series[k].points.size()) continue;
      double v = series[k].points[c].y;
      double y = canvas.Y(v);
      canvas.Append(Bar(x0 + k * bar, y, std::max(1.0, bar - 1), canvas.Y(0) - y, series[k],
                        categories[c], v));
    }
  }
  return canvas.Finish();
}

std::string StackedBarPlot(const Frame& frame, const std::vector<std::string>& categories,
                           const std::vector<Series>& layers) {
  Canvas canvas(frame, layers, Swatch::kBox);
  canvas.DrawYAxis();
  canvas.DrawCategoryAxis(categories);
  double band = (canvas.right() - canvas.left()) / std::max<size_t>(1, categories.size());
  double width = std::min(band * 0.62, 64.0);
  for (size_t c = 0; c < categories.size(); ++c) {
    double base = 0;
    double x = canvas.BandCenter(c, categories) - width / 2;
    for (const Series& layer : layers) {
      if (c >= layer.points.size() || layer.points[c].y <= 0) continue;
      double v = layer.points[c].y;
      double y_top = canvas.Y(base + v);
      canvas.Append(Bar(x, y_top, width, canvas.Y(base) - y_top, layer, categories[c], v));
      base += v;
    }
  }
  return canvas.Finish();
}

}  // namespace ptxbench::report
