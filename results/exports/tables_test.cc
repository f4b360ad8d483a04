// The csv and jsonl tables read back: every column, row and value, and the
// two formats agree.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/file.h"
#include "results/exports/export.h"
#include "results/exports/testing/scratch.h"
#include "results/exports/testing/trajectories.h"
#include "testing/csv.h"
#include "verdict/verdict.h"

namespace ptxbench::exports {
namespace {

namespace v1 = ::ptxbench::v1;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::Scratch;
using testing::TurnKind;

using Row = ptxbench::testing::CsvRow;

// RFC 4180 with CRLF row ends, as FORMATS.md says.
std::vector<Row> ParseCsv(const std::string& text) {
  return ptxbench::testing::CsvRows(text, ptxbench::testing::CsvLineEnd::kCrlf);
}

std::vector<nlohmann::ordered_json> ParseJsonl(const std::string& text) {
  std::vector<nlohmann::ordered_json> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    out.push_back(nlohmann::ordered_json::parse(line));
  }
  return out;
}

const std::vector<std::string> kTurnColumns = {
    "experiment_id", "experiment", "trajectory_id", "model", "definition", "tag", "sample", "turn",
    "state", "trajectory_state", "status", "correct", "speedup", "min_speedup", "input_tokens",
    "output_tokens", "reasoning_tokens", "cached_tokens", "cost_usd", "model_latency_ms",
    "eval_ms", "started_unix_ms", "finished_unix_ms", "provider", "simulated", "kernel_sha256"};
const std::vector<std::string> kWorkloadColumns = {
    "experiment_id", "experiment", "trajectory_id", "model", "definition", "tag", "sample", "turn",
    "kernel_sha256", "workload_uuid", "axes", "status", "latency_ms", "reference_latency_ms",
    "speedup", "reference", "max_abs_error", "max_rel_error", "matched_ratio",
    "roofline_fraction", "errors", "simulated"};

class TablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trajectories_ = {
        testing::Trajectory(0, v1::SUBMITTED,
                            {{TurnKind::kNoCode},
                             {TurnKind::kIncorrect},
                             {TurnKind::kCorrect, 1.25, /*simulated=*/true}}),
        testing::Trajectory(1, v1::AWAITING_EVAL,
                            {{TurnKind::kCompileError}, {TurnKind::kCudnn}, {TurnKind::kAwaitingEval}}),
    };
    for (Format f : {Format::kCsv, Format::kJsonl}) {
      ASSERT_TRUE(testing::ExportAll(f, scratch_ / std::string(FormatName(f)), {},
                                     testing::Experiment(), testing::Definitions(), trajectories_)
                      .ok());
    }
  }

  std::string Read(const std::string& relative) {
    auto text = ReadFile(scratch_ / relative);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.value_or("");
  }

  Scratch scratch_;
  std::vector<v1::Trajectory> trajectories_;
};

TEST_F(TablesTest, CsvTurnsHoldEveryTurnWithItsFacts) {
  const std::vector<Row> rows = ParseCsv(Read("csv/turns.csv"));
  ASSERT_EQ(rows.size(), 1u + 6u);
  EXPECT_THAT(rows[0], ElementsAreArray(kTurnColumns));
  for (const Row& row : rows) EXPECT_EQ(row.size(), kTurnColumns.size());

  const Row& no_code = rows[1];
  EXPECT_THAT(Row(no_code.begin(), no_code.begin() + 12),
              ElementsAre("exp_00112233aabbccdd", "export-test", "tr_test_0", "m/one",
                          "gemm_export_test", "ptxb-basic", "0", "0", "done", "SUBMITTED", "",
                          "false"));
  EXPECT_EQ(no_code[12], "");  // speedup: not correct
  EXPECT_EQ(no_code[13], "");  // min_speedup: not evaluated
  EXPECT_EQ(no_code[20], "");  // eval_ms
  EXPECT_EQ(no_code[25], "");  // no kernel

  const Row& correct = rows[3];
  EXPECT_EQ(correct[10], "PASSED");
  EXPECT_EQ(correct[11], "true");
  EXPECT_EQ(std::stod(correct[12]), verdict::KernelSpeedup(trajectories_[0].turns(2).eval()));
  EXPECT_EQ(correct[13], "1.25");
  EXPECT_THAT(Row(correct.begin() + 14, correct.begin() + 22),
              ElementsAre("1002", "202", "50", "10", "0.03", "1234", "4002", "1767225620000"));
  EXPECT_EQ(correct[22], "1767225625000");
  EXPECT_EQ(correct[23], "openai");
  EXPECT_EQ(correct[24], "true");  // a simulated evaluation
  EXPECT_EQ(correct[25], trajectories_[0].turns(2).kernel_sha256());

  EXPECT_EQ(rows[4][10], "COMPILE_ERROR");
  EXPECT_EQ(rows[5][10], "LIBRARY_FALLBACK");
  const Row& pending = rows[6];
  EXPECT_EQ(pending[8], "eval");
  EXPECT_EQ(pending[9], "AWAITING_EVAL");
  EXPECT_EQ(pending[10], "");
  EXPECT_EQ(pending[22], "");  // not finished
}

TEST_F(TablesTest, CsvWorkloadsHoldEveryResult) {
  const std::vector<Row> rows = ParseCsv(Read("csv/workloads.csv"));
  ASSERT_EQ(rows.size(), 1u + 4u);  // two traces of the incorrect turn, two of the correct one
  EXPECT_THAT(rows[0], ElementsAreArray(kWorkloadColumns));
  const Row& incorrect = rows[1];
  EXPECT_EQ(incorrect[7], "1");
  EXPECT_EQ(incorrect[9], "w-0001");
  EXPECT_EQ(incorrect[10], "K=32;M=8;N=64");
  EXPECT_EQ(incorrect[11], "INCORRECT_NUMERICAL");
  EXPECT_EQ(incorrect[12], "");  // not timed
  EXPECT_EQ(incorrect[14], "");
  EXPECT_EQ(incorrect[15], "cuBLAS");
  EXPECT_EQ(incorrect[16], "NaN");
  EXPECT_EQ(incorrect[17], "inf");
  EXPECT_EQ(incorrect[18], "0.5");
  EXPECT_EQ(incorrect[20], "C[0, 3]: expected 1.5, got nan | C[1, 7]: expected 2, got 9 | off");
  EXPECT_EQ(incorrect[21], "false");
  const Row& passed = rows[3];
  EXPECT_EQ(passed[11], "PASSED");
  EXPECT_EQ(std::stod(passed[12]), 0.5 / 1.25);
  EXPECT_EQ(passed[13], "0.5");
  EXPECT_EQ(passed[14], "1.25");
  EXPECT_EQ(passed[16], "0.001");
  EXPECT_EQ(passed[19], "0.25");
  EXPECT_EQ(passed[20], "");
  EXPECT_EQ(passed[21], "true");
}

TEST_F(TablesTest, JsonlHoldsTheSameValuesTyped) {
  const std::vector<Row> csv = ParseCsv(Read("csv/turns.csv"));
  const auto turns = ParseJsonl(Read("jsonl/turns.jsonl"));
  ASSERT_EQ(turns.size(), csv.size() - 1);
  for (size_t i = 0; i < turns.size(); ++i) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : turns[i].items()) keys.push_back(key);
    EXPECT_THAT(keys, ElementsAreArray(kTurnColumns));
    // Every csv field is the jsonl value written as text (null: empty).
    for (size_t c = 0; c < kTurnColumns.size(); ++c) {
      const auto& v = turns[i][kTurnColumns[c]];
      const std::string text = v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump();
      if (v.is_number_float()) {
        EXPECT_EQ(v.get<double>(), std::stod(csv[i + 1][c])) << kTurnColumns[c];
      } else {
        EXPECT_EQ(text, csv[i + 1][c]) << kTurnColumns[c] << " of row " << i;
      }
    }
  }
  EXPECT_TRUE(turns[2]["correct"].is_boolean());
  EXPECT_TRUE(turns[2]["sample"].is_number_integer());
  EXPECT_TRUE(turns[0]["status"].is_null());

  const auto workloads = ParseJsonl(Read("jsonl/workloads.jsonl"));
  ASSERT_EQ(workloads.size(), 4u);
  EXPECT_EQ(workloads[0]["axes"], nlohmann::ordered_json::parse(R"({"K": 32, "M": 8, "N": 64})"));
  EXPECT_TRUE(workloads[0]["max_abs_error"].is_null());  // NaN
  EXPECT_TRUE(workloads[0]["max_rel_error"].is_null());  // infinity
  EXPECT_EQ(workloads[0]["errors"].size(), 2u);
  EXPECT_EQ(workloads[0]["errors"][1], "C[1, 7]: expected 2, got 9 | off");
  EXPECT_EQ(workloads[2]["speedup"], 1.25);
}

TEST_F(TablesTest, AnExportWithoutTrajectoriesHasItsHeaders) {
  ASSERT_TRUE(testing::ExportAll(Format::kCsv, scratch_ / "empty", {}, testing::Experiment(), {}, {})
                  .ok());
  EXPECT_EQ(ParseCsv(Read("empty/turns.csv")).size(), 1u);
  EXPECT_EQ(ParseCsv(Read("empty/workloads.csv")).size(), 1u);
}

}  // namespace
}  // namespace ptxbench::exports
