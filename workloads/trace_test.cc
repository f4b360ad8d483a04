#include "workloads/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace ptxbench::workloads {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TraceRecord Passed() {
  TraceRecord t;
  t.definition = "gemm_n7168_k5120";
  t.solution = "m_gemm_0123456789ab";
  t.workload.uuid = "u-1";
  t.workload.axes["M"] = 70;
  t.workload.inputs["A"].type = "random";
  TraceEvaluation& e = t.evaluation.emplace();
  e.status = "PASSED";
  e.log = "ptxas info: Used 128 registers";
  e.correctness = TraceCorrectness{0.001, 0.5, 1.0};
  e.performance = TracePerformance{0.25, 0.5, 2.0, "cuBLAS", 0.4};
  e.environment.hardware = "NVIDIA H200";
  e.environment.libs["cuda"] = "12.8";
  e.timestamp = "2026-01-02T03:04:05.006Z";
  return t;
}

TEST(TraceTest, RoundTripsAPassedTrace) {
  const std::string line = FormatTraceLine(Passed());
  auto back = ParseTraceLine(line, "t.jsonl:1");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->definition, "gemm_n7168_k5120");
  EXPECT_EQ(back->solution, "m_gemm_0123456789ab");
  EXPECT_EQ(back->workload.uuid, "u-1");
  EXPECT_EQ(back->workload.axes.at("M"), 70);
  ASSERT_TRUE(back->evaluation.has_value());
  const TraceEvaluation& e = *back->evaluation;
  EXPECT_EQ(e.status, "PASSED");
  EXPECT_EQ(e.log, "ptxas info: Used 128 registers");
  ASSERT_TRUE(e.correctness.has_value());
  EXPECT_EQ(e.correctness->max_relative_error, 0.001);
  EXPECT_EQ(e.correctness->max_absolute_error, 0.5);
  EXPECT_EQ(e.correctness->matched_ratio, 1.0);
  ASSERT_TRUE(e.performance.has_value());
  EXPECT_EQ(e.performance->latency_ms, 0.25);
  EXPECT_EQ(e.performance->reference_latency_ms, 0.5);
  EXPECT_EQ(e.performance->speedup_factor, 2.0);
  EXPECT_EQ(e.performance->reference, "cuBLAS");
  EXPECT_EQ(e.performance->roofline_fraction, 0.4);
  EXPECT_EQ(e.environment.hardware, "NVIDIA H200");
  EXPECT_EQ(e.environment.libs.at("cuda"), "12.8");
  EXPECT_EQ(e.timestamp, "2026-01-02T03:04:05.006Z");
  EXPECT_EQ(FormatTraceLine(*back), line);
}

TEST(TraceTest, WritesTheKeysInFlashInferOrder) {
  const StrictJson j = TraceJson(Passed());
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_THAT(keys, ElementsAre("definition", "solution", "workload", "evaluation"));
  EXPECT_TRUE(j["evaluation"]["performance"].contains("speedup_factor"));
  EXPECT_TRUE(j["evaluation"]["correctness"].contains("max_relative_error"));
}

TEST(TraceTest, UndefinedErrorsAreFlashInferStrings) {
  TraceRecord t = Passed();
  t.evaluation->status = "INCORRECT_NUMERICAL";
  t.evaluation->performance.reset();
  t.evaluation->correctness->max_absolute_error = std::numeric_limits<double>::quiet_NaN();
  t.evaluation->correctness->max_relative_error = std::numeric_limits<double>::infinity();
  t.evaluation->errors = {"C[0,1]: expected 1, got nan"};
  const std::string line = FormatTraceLine(t);
  EXPECT_THAT(line, HasSubstr(R"("max_absolute_error":"NaN")"));
  EXPECT_THAT(line, HasSubstr(R"("max_relative_error":"Infinity")"));
  EXPECT_THAT(line, HasSubstr(R"("performance":null)"));
  auto back = ParseTraceLine(line, "t");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(std::isnan(back->evaluation->correctness->max_absolute_error));
  EXPECT_TRUE(std::isinf(back->evaluation->correctness->max_relative_error));
  EXPECT_THAT(back->evaluation->errors, ElementsAre("C[0,1]: expected 1, got nan"));
}

TEST(TraceTest, ReadsNullErrorsAsNaN) {
  auto back = ParseTraceLine(
      R"({"definition": "d", "workload": {"uuid": "u", "axes": {}, "inputs": {}},
          "solution": "s", "evaluation": {"status": "INCORRECT_NUMERICAL", "log": "",
          "correctness": {"max_relative_error": null, "max_absolute_error": 3},
          "environment": {"hardware": "H100"}, "timestamp": "t"}})",
      "t");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(std::isnan(back->evaluation->correctness->max_relative_error));
  EXPECT_EQ(back->evaluation->correctness->max_absolute_error, 3);
}

TEST(TraceTest, AWorkloadLineIsATraceWithoutEvaluation) {
  auto back = ParseTraceLine(
      R"({"definition": "d", "solution": null, "workload": {"uuid": "u", "axes": {"M": 1},
          "inputs": {"A": {"type": "random"}}}, "evaluation": null})",
      "w.jsonl:1");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->solution.has_value());
  EXPECT_FALSE(back->evaluation.has_value());
}

TEST(TraceTest, MetricsMustMatchTheStatus) {
  TraceRecord t = Passed();
  t.evaluation->status = "COMPILE_ERROR";
  auto bad = ParseTraceLine(FormatTraceLine(t), "t.jsonl:4");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("t.jsonl:4: $.evaluation.correctness: expected null, found"));
  EXPECT_THAT(bad.status().message(), HasSubstr("status COMPILE_ERROR has no correctness metrics"));

  t = Passed();
  t.evaluation->performance.reset();
  bad = ParseTraceLine(FormatTraceLine(t), "t.jsonl:5");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "t.jsonl:5: $.evaluation.performance: expected an object (status PASSED has "
            "performance metrics), found nothing");
}

TEST(TraceTest, RefusesWrongTypesNamingTheField) {
  StrictJson j = TraceJson(Passed());
  j["evaluation"]["performance"]["latency_ms"] = -1;
  auto bad = ParseTraceLine(j.dump(), "t");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("$.evaluation.performance.latency_ms: expected a number of at least 0"));

  j = TraceJson(Passed());
  j["evaluation"]["status"] = "GREAT";
  bad = ParseTraceLine(j.dump(), "t");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("$.evaluation.status: expected one of"));

  j = TraceJson(Passed());
  j["evaluation"]["environment"]["hardware"] = "";
  bad = ParseTraceLine(j.dump(), "t");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("$.evaluation.environment.hardware"));
}

TEST(TraceTest, KnowsFlashInferStatuses) {
  EXPECT_TRUE(IsFlashInferStatus("PASSED"));
  EXPECT_TRUE(IsFlashInferStatus("INCORRECT_DTYPE"));
  EXPECT_FALSE(IsFlashInferStatus("LIBRARY_FALLBACK"));
  EXPECT_FALSE(IsFlashInferStatus("COMPILED"));
}

}  // namespace
}  // namespace ptxbench::workloads
