#include "results/report/svg.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "results/report/testing/markup.h"

namespace ptxbench::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Occurrences;

TEST(EscapeHtmlTest, EscapesMarkupAndReplacesControlCharacters) {
  EXPECT_EQ(EscapeHtml("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(EscapeHtml(std::string("a\0b\x1b\x7f\tc\n", 8)),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD\tc\n");
  EXPECT_EQ(EscapeHtml("gpt-4.1 × ü"), "gpt-4.1 × ü");
}

TEST(EllipsizeTest, CutsWholeCharacters) {
  EXPECT_EQ(Ellipsize("abcdef", 6), "abcdef");
  EXPECT_EQ(Ellipsize("abcdefg", 6), "abcde…");
  EXPECT_EQ(Ellipsize("ééééé", 3), "éé…");
  EXPECT_EQ(Ellipsize("éé", 2), "éé");
  EXPECT_EQ(Ellipsize("abc", 0), "");
}

TEST(NiceTicksTest, RoundStepsCoveringTheRange) {
  EXPECT_THAT(NiceTicks(0, 100, 5, false), ElementsAre(0, 20, 40, 60, 80, 100));
  EXPECT_THAT(NiceTicks(1, 5, 6, true), ElementsAre(1, 2, 3, 4, 5));
  EXPECT_THAT(NiceTicks(0, 2, 6, false), ElementsAre(0, 0.5, 1, 1.5, 2));
  EXPECT_THAT(NiceTicks(0, 7, 5, true), ElementsAre(0, 2, 4, 6, 8));
  // Degenerate input still gives an axis.
  EXPECT_GE(NiceTicks(3, 3, 5, true).size(), 2u);
  EXPECT_GE(NiceTicks(NAN, INFINITY, 5, false).size(), 2u);
  EXPECT_LE(NiceTicks(0, 1e300, 5, false).size(), 64u);
}

SeriesStyle Colored(const char* color) {
  SeriesStyle style;
  style.color = color;
  return style;
}

Frame TestFrame(const std::string& title) {
  return Frame{title, {"turn", 1, 3, false, true}, {"share", 0, 100, true, false}};
}

TEST(LinePlotTest, OneClosedSvgWithTitleAxesAndLegend) {
  std::vector<Series> series = {
      {"model <a>", {}, {{1, 10}, {2, 40}, {3, 55}}, {}},
      {"model b", {"#E69F00", "7 4", Marker::kSquare, true}, {{1, 5}, {2, 20}}, {}}};
  std::string svg = LinePlot(TestFrame("Pass & fail"), series);
  EXPECT_EQ(svg.rfind("<svg class=\"plot\"", 0), 0u);
  EXPECT_EQ(Occurrences(svg, "<svg"), 1);
  EXPECT_EQ(svg.substr(svg.size() - 6), "</svg>");
  EXPECT_THAT(svg, HasSubstr("viewBox=\"0 0 560 "));
  EXPECT_THAT(svg, HasSubstr("<title>Pass &amp; fail</title>"));
  EXPECT_EQ(Occurrences(svg, "<polyline"), 2);
  EXPECT_THAT(svg, HasSubstr(">100%</text>"));             // a y tick
  EXPECT_THAT(svg, HasSubstr(">3</text>"));                // an x tick
  EXPECT_THAT(svg, HasSubstr(">model &lt;a&gt;</text>"));  // the legend
  EXPECT_THAT(svg, HasSubstr("stroke-dasharray=\"7 4\""));
  EXPECT_THAT(svg, Not(HasSubstr("<a>")));
}

TEST(LinePlotTest, NonFiniteValuesStayInsideThePlot) {
  std::string svg = LinePlot(TestFrame("t"), {{"s", {}, {{NAN, INFINITY}, {2, -INFINITY}}, {}}});
  EXPECT_THAT(svg, Not(HasSubstr("nan")));
  EXPECT_THAT(svg, Not(HasSubstr("inf")));
}

TEST(LinePlotTest, ALongTitleTakesTwoLines) {
  std::string title(40, 'a');
  title += " " + std::string(40, 'b');
  std::string svg = LinePlot(TestFrame(title), {});
  EXPECT_THAT(svg, HasSubstr("<tspan x=\"8\" dy=\"16\">" + std::string(40, 'b') + "</tspan>"));
}

TEST(StackedBarPlotTest, ARectPerNonZeroLayerAndTurn) {
  std::vector<Series> layers = {{"passed", {}, {{0, 5}, {1, 0}}, {}},
                                {"incorrect", Colored("#D55E00"), {{0, 3}, {1, 4}}, {}}};
  std::string svg = StackedBarPlot(TestFrame("t"), {"1", "2"}, layers);
  // 3 bars plus 2 legend swatches.
  EXPECT_EQ(Occurrences(svg, "<rect"), 5);
  EXPECT_THAT(svg, HasSubstr("<title>incorrect · 2: 4</title>"));
}

TEST(GroupedBarPlotTest, ABarPerSeriesAndCategory) {
  std::vector<Series> series = {{"a", {}, {{0, 1}, {1, 2}, {2, 3}}, {}},
                                {"b", Colored("#E69F00"), {{0, 3}, {1, 2}, {2, 1}}, {}}};
  std::string svg = GroupedBarPlot(TestFrame("t"), {"< 1×", "1–2×", "≥ 2×"}, series);
  EXPECT_EQ(Occurrences(svg, "<rect"), 6 + 2);
  EXPECT_THAT(svg, HasSubstr(">≥ 2×</text>"));
}

TEST(ScatterPlotTest, LabelsEveryPointEscaped) {
  Series s{"m", {}, {{0.1, 50}, {0.2, 60}}, {"<tag>", "t2"}};
  Frame frame{"cost", {"usd", 0, 0.3}, {"share", 0, 100, true, false}};
  std::string svg = ScatterPlot(frame, {s});
  EXPECT_THAT(svg, HasSubstr(">&lt;tag&gt;</text>"));
  EXPECT_THAT(svg, HasSubstr(">t2</text>"));
  EXPECT_EQ(Occurrences(svg, "<circle"), 2 + 1);  // points and the legend's marker
}

}  // namespace
}  // namespace ptxbench::report
