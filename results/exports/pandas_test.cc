// pandas reads the csv and jsonl tables with no options: row counts and the
// dtype it infers for every column (results/exports/testing/pandas_check.py). Skipped,
// saying so, where the configured Python has no pandas.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "process/run.h"
#include "results/exports/export.h"
#include "results/exports/testing/scratch.h"
#include "results/exports/testing/trajectories.h"

namespace ptxbench::exports {
namespace {

namespace v1 = ::ptxbench::v1;
using testing::TurnKind;

constexpr int kSkip = 77;

TEST(PandasTest, ReadsBothTablesInBothFormats) {
  testing::Scratch scratch;
  std::vector<v1::Trajectory> trajectories;
  int turns = 0, workloads = 0;
  for (int sample = 0; sample < 10; ++sample) {
    trajectories.push_back(testing::Trajectory(
        sample, sample % 2 ? v1::LIMITS_EXCEEDED : v1::SUBMITTED,
        {{TurnKind::kNoCode},
         {TurnKind::kIncorrect},
         {TurnKind::kCompileError},
         {TurnKind::kCorrect, 1.0 + sample, sample == 3}}));
    turns += 4;
    workloads += 4;
  }
  trajectories.push_back(
      testing::Trajectory(10, v1::AWAITING_MODEL, {{TurnKind::kCudnn}, {TurnKind::kAwaitingModel}}));
  turns += 2;
  for (Format f : {Format::kCsv, Format::kJsonl}) {
    ASSERT_TRUE(testing::ExportAll(f, scratch / std::string(FormatName(f)), {},
                                   testing::Experiment(), testing::Definitions(), trajectories)
                    .ok());
  }
  process::RunOptions run;
  run.argv = {PTXB_PANDAS_PYTHON, PTXB_PANDAS_CHECK, scratch / "csv", scratch / "jsonl",
              absl::StrCat(turns), absl::StrCat(workloads)};
  run.deadline = absl::Minutes(2);
  auto result = process::Run(run);
  ASSERT_TRUE(result.ok()) << result.status();
  // 127: no such Python at all.
  if (result->exited && (result->exit_code == kSkip || result->exit_code == 127)) {
    GTEST_SKIP() << PTXB_PANDAS_PYTHON << ": " << result->output;
  }
  EXPECT_TRUE(result->ok()) << result->Describe() << "\n" << result->output;
}

}  // namespace
}  // namespace ptxbench::exports
