#include "common/prometheus.h"

#include "gtest/gtest.h"

namespace ptxbench::prometheus {
namespace {

TEST(common_prometheus, CounterAndGaugeFamilies) {
  Page page;
  page.Family("x_calls_total", Type::kCounter, "Calls made");
  page.Sample({{"model", "a"}}, 3);
  page.Sample({{"model", "b"}, {"kind", "llm"}}, 0.25);
  page.Family("x_depth", Type::kGauge, "Queued");
  page.Sample({}, 7);
  EXPECT_EQ(page.text(),
            "# HELP x_calls_total Calls made\n"
            "# TYPE x_calls_total counter\n"
            "x_calls_total{model=\"a\"} 3\n"
            "x_calls_total{model=\"b\",kind=\"llm\"} 0.25\n"
            "# HELP x_depth Queued\n"
            "# TYPE x_depth gauge\n"
            "x_depth 7\n");
}

TEST(common_prometheus, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  Page page;
  page.Family("x", Type::kGauge, "h");
  page.Sample({{"model", "say \"hi\"\n"}}, 1);
  EXPECT_EQ(page.text(), "# HELP x h\n# TYPE x gauge\nx{model=\"say \\\"hi\\\"\\n\"} 1\n");
}

TEST(common_prometheus, ValuesAsPrometheusReadsThem) {
  EXPECT_EQ(FormatValue(12345678901), "12345678901");
  EXPECT_EQ(FormatValue(0.5), "0.5");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(FormatValue(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(FormatValue(0.0 / 0.0), "NaN");
}

TEST(common_prometheus, HistogramBucketsAreCumulativeWithInf) {
  Histogram h({0.1, 1});
  h.Observe(0.1);  // "le" is inclusive
  h.Observe(0.5);
  h.Observe(3);
  h.ObserveDuration(absl::Milliseconds(50));
  Page page;
  page.Family("x_seconds", Type::kHistogram, "Durations");
  page.Sample({{"op", "c"}}, h.Read());
  EXPECT_EQ(page.text(),
            "# HELP x_seconds Durations\n"
            "# TYPE x_seconds histogram\n"
            "x_seconds_bucket{op=\"c\",le=\"0.1\"} 2\n"
            "x_seconds_bucket{op=\"c\",le=\"1\"} 3\n"
            "x_seconds_bucket{op=\"c\",le=\"+Inf\"} 4\n"
            "x_seconds_sum{op=\"c\"} 3.65\n"
            "x_seconds_count{op=\"c\"} 4\n");
}

TEST(common_prometheus, DurationBucketsSpanTheRange) {
  EXPECT_EQ(DurationBuckets(0.001, 0.1),
            (std::vector<double>{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1}));
  EXPECT_EQ(FormatValue(DurationBuckets(0.0025, 0.0025)[0]), "0.0025");
}

}  // namespace
}  // namespace ptxbench::prometheus
