#include "results/exports/export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "results/exports/testing/scratch.h"
#include "results/exports/testing/trajectories.h"

namespace ptxbench::exports {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Scratch;
using testing::TurnKind;

constexpr Format kAllFormats[] = {Format::kCsv, Format::kJsonl, Format::kPtxbench,
                                  Format::kFlashinferTrace, Format::kSft};

// What is in `folder` besides `keep`, names only: temporary siblings show here.
std::vector<std::string> Entries(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(folder)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ExportTest, ParsesEveryFormatByName) {
  for (Format f : kAllFormats) {
    auto parsed = ParseFormat(FormatName(f));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, f);
  }
  auto bad = ParseFormat("parquet");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "unknown export format \"parquet\"; the formats are csv, jsonl, ptxbench, "
            "flashinfer-trace and sft");
}

TEST(ExportTest, OnlyTheTablesDoWithoutTexts) {
  EXPECT_EQ(DetailFor(Format::kCsv), v1::TURN_DETAIL_RESULTS);
  EXPECT_EQ(DetailFor(Format::kJsonl), v1::TURN_DETAIL_RESULTS);
  EXPECT_EQ(DetailFor(Format::kPtxbench), v1::TURN_DETAIL_FULL);
  EXPECT_EQ(DetailFor(Format::kFlashinferTrace), v1::TURN_DETAIL_FULL);
  EXPECT_EQ(DetailFor(Format::kSft), v1::TURN_DETAIL_FULL);
}

TEST(ExportTest, ParsesSftFilters) {
  auto correct = ParseSftFilter("correct");
  ASSERT_TRUE(correct.ok());
  EXPECT_EQ(correct->kind, SftFilter::Kind::kCorrect);
  auto best = ParseSftFilter("best");
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->kind, SftFilter::Kind::kBest);
  auto min = ParseSftFilter("min-speedup=1.5");
  ASSERT_TRUE(min.ok());
  EXPECT_EQ(min->kind, SftFilter::Kind::kMinSpeedup);
  EXPECT_EQ(min->min_speedup, 1.5);
  EXPECT_EQ(SftFilterName(*min), "min-speedup=1.5");
  EXPECT_EQ(SftFilterName(*best), "best");

  for (const char* bad : {"min-speedup=", "min-speedup=-1", "min-speedup=0", "min-speedup=nan",
                          "min-speedup=fast"}) {
    auto parsed = ParseSftFilter(bad);
    ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("must be a positive number")) << bad;
  }
  auto unknown = ParseSftFilter("fastest");
  ASSERT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(),
            "unknown SFT filter \"fastest\"; the filters are correct, best and min-speedup=X");
}

TEST(ExportTest, RefusesAFolderThatIsNotEmpty) {
  Scratch scratch;
  fs::create_directories(scratch / "out");
  std::ofstream(scratch / "out/keep.txt") << "mine";
  for (Format f : kAllFormats) {
    auto writer = MakeWriter(f, scratch / "out", {});
    ASSERT_EQ(writer.status().code(), absl::StatusCode::kAlreadyExists);
    EXPECT_EQ(writer.status().message(),
              absl::StrCat("output folder ", scratch / "out",
                           " exists and is not empty; name a new folder"));
  }
  std::ofstream(scratch / "file") << "x";
  auto on_file = MakeWriter(Format::kCsv, scratch / "file", {});
  ASSERT_EQ(on_file.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(on_file.status().message(), HasSubstr("exists and is not a folder"));
  EXPECT_THAT(Entries(scratch.path()), ElementsAre("file", "out"));
}

TEST(ExportTest, TheFolderAppearsAtFinishAndOnlyThen) {
  Scratch scratch;
  fs::create_directories(scratch / "empty");  // an empty folder may be the target
  for (const char* name : {"empty", "new/nested"}) {
    auto writer = MakeWriter(Format::kCsv, scratch / name, {});
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->BeginExperiment(testing::Experiment(), testing::Definitions()).ok());
    ASSERT_TRUE((*writer)->Add(testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kCorrect, 2}})).ok());
    ASSERT_TRUE((*writer)->EndExperiment().ok());
    EXPECT_FALSE(fs::exists(scratch / (std::string(name) + "/turns.csv")));
    ASSERT_TRUE((*writer)->Finish().ok());
    EXPECT_THAT(testing::FilesUnder(scratch / name), ElementsAre("turns.csv", "workloads.csv"));
  }
  EXPECT_THAT(Entries(scratch.path()), ElementsAre("empty", "new"));
  EXPECT_THAT(Entries(scratch / "new"), ElementsAre("nested"));
  // Made as mkdir makes a folder (0777 less the umask), not private as a
  // temporary one: the user may mean to share it.
  EXPECT_EQ(fs::status(scratch / "new/nested").permissions(),
            fs::status(scratch / "new").permissions());
}

TEST(ExportTest, AnAbandonedExportLeavesNothing) {
  Scratch scratch;
  for (Format f : kAllFormats) {
    {
      auto writer = MakeWriter(f, scratch / "out", {});
      ASSERT_TRUE(writer.ok()) << writer.status();
      ASSERT_TRUE((*writer)->BeginExperiment(testing::Experiment(), testing::Definitions()).ok());
      ASSERT_TRUE(
          (*writer)->Add(testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kCorrect, 2}})).ok());
      EXPECT_EQ(Entries(scratch.path()).size(), 1u) << "the temporary folder";
    }
    EXPECT_TRUE(Entries(scratch.path()).empty()) << FormatName(f);
  }
}

TEST(ExportTest, CallsOutOfOrderAreRefused) {
  Scratch scratch;
  auto writer = MakeWriter(Format::kJsonl, scratch / "out", {});
  ASSERT_TRUE(writer.ok());
  Writer& w = **writer;
  const v1::Trajectory t = testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kCorrect, 2}});
  EXPECT_EQ(w.Add(t).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.EndExperiment().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(w.BeginExperiment(testing::Experiment(), testing::Definitions()).ok());
  absl::Status twice = w.BeginExperiment(testing::Experiment(), testing::Definitions());
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(twice.message(), HasSubstr("is not ended (EndExperiment)"));
  EXPECT_EQ(w.Finish().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(w.Add(t).ok());
  ASSERT_TRUE(w.EndExperiment().ok());
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(w.Finish().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.BeginExperiment(testing::Experiment(), {}).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ExportTest, TakesWholeTrajectoriesOfTheCurrentExperimentOnly) {
  Scratch scratch;
  auto writer = MakeWriter(Format::kCsv, scratch / "out", {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->BeginExperiment(testing::Experiment(), {}).ok());
  v1::Trajectory part = testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kCorrect, 2}});
  part.set_continued(true);
  absl::Status s = (*writer)->Add(part);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "trajectory tr_test_0: a continued part; exports take whole trajectories");
  // After an error, nothing more.
  absl::Status after = (*writer)->Add(testing::Trajectory(1, v1::SUBMITTED, {}));
  EXPECT_EQ(after.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(after.message(), HasSubstr("failed earlier"));
  EXPECT_EQ((*writer)->Finish().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(scratch / "out"));

  auto other = MakeWriter(Format::kCsv, scratch / "out2", {});
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->BeginExperiment(testing::Experiment(), {}).ok());
  v1::Trajectory foreign = testing::Trajectory(0, v1::SUBMITTED, {});
  foreign.mutable_summary()->set_experiment_id("exp_other");
  s = (*other)->Add(foreign);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("belongs to experiment exp_other"));
}

TEST(ExportTest, ThePtxbenchFormatHoldsOneExperiment) {
  Scratch scratch;
  auto writer = MakeWriter(Format::kPtxbench, scratch / "out", {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->BeginExperiment(testing::Experiment(), testing::Definitions()).ok());
  ASSERT_TRUE((*writer)->EndExperiment().ok());
  v1::Experiment second = testing::Experiment();
  second.set_experiment_id("exp_second");
  second.set_name("second");
  absl::Status s = (*writer)->BeginExperiment(second, testing::Definitions());
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "the ptxbench format holds one experiment: export-test (exp_00112233aabbccdd) is "
            "exported already, so second (exp_second) needs an export of its own");

  // The other formats take several.
  for (Format f : {Format::kCsv, Format::kJsonl, Format::kFlashinferTrace, Format::kSft}) {
    const std::string out = scratch / std::string(FormatName(f));
    auto w = MakeWriter(f, out, {});
    ASSERT_TRUE(w.ok());
    for (const v1::Experiment& e : {testing::Experiment(), second}) {
      ASSERT_TRUE((*w)->BeginExperiment(e, testing::Definitions()).ok()) << FormatName(f);
      ASSERT_TRUE((*w)->EndExperiment().ok());
    }
    ASSERT_TRUE((*w)->Finish().ok()) << FormatName(f);
  }
}

}  // namespace
}  // namespace ptxbench::exports
