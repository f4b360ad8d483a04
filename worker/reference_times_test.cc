#include "worker/reference_times.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ptxbench::worker {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

gpu::GpuInfo Gpu(int index) {
  gpu::GpuInfo g;
  g.index = index;
  g.name = "NVIDIA H200";
  g.pci_bus_id = index == 0 ? "0000:3b:00.0" : "0000:5e:00.0";
  return g;
}

runner::RunnerJob Job() {
  runner::RunnerJob job;
  job.definition_json = "{\"name\": \"gemm\"}";
  job.workloads = {{"u70", {{"M", 70}}, {}}, {"u232", {{"M", 232}}, {}}};
  job.trials = 3;
  return job;
}

TEST(ReferenceTimes, ReusesAFigureOnTheSameGpuAndWorkloadUntilItIsTooOld) {
  FakeClock clock;
  ReferenceTimes times(absl::Seconds(600), &clock);
  const runner::RunnerJob job = Job();
  EXPECT_THAT(times.Lookup(Gpu(0), job), IsEmpty());
  EXPECT_EQ(times.Store(Gpu(0), job, {{"u70", "cuBLAS", 0.0393, "reference cuBLAS trial 0: ...\n"}}),
            "");
  clock.Advance(absl::Seconds(90));
  std::vector<runner::KnownReference> known = times.Lookup(Gpu(0), job);
  ASSERT_THAT(known, SizeIs(1));  // u232 was never timed: the run times it
  EXPECT_EQ(known[0].workload_uuid, "u70");
  EXPECT_EQ(known[0].name, "cuBLAS");
  EXPECT_DOUBLE_EQ(known[0].ms, 0.0393);
  // The trace says where the figure comes from, and keeps the original lines.
  EXPECT_THAT(known[0].log, HasSubstr("earlier evaluation on this GPU 90 s ago"));
  EXPECT_THAT(known[0].log, HasSubstr("reference cuBLAS trial 0: ...\n"));
  clock.Advance(absl::Seconds(511));
  EXPECT_THAT(times.Lookup(Gpu(0), job), IsEmpty());
}

TEST(ReferenceTimes, EveryRunTimesTheOldestFigureAgain) {
  FakeClock clock;
  ReferenceTimes times(absl::Seconds(600), &clock);
  const runner::RunnerJob job = Job();
  times.Store(Gpu(0), job, {{"u70", "cuBLAS", 0.0393, ""}});
  clock.Advance(absl::Seconds(10));
  times.Store(Gpu(0), job, {{"u232", "cuBLAS", 0.0428, ""}});
  std::vector<runner::KnownReference> known = times.Lookup(Gpu(0), job);
  ASSERT_THAT(known, SizeIs(1));
  EXPECT_EQ(known[0].workload_uuid, "u232") << "u70, the oldest, is timed again";
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ(times.Store(Gpu(0), job, {{"u70", "cuBLAS", 0.0395, ""}}), "") << "within 3%";
  known = times.Lookup(Gpu(0), job);
  ASSERT_THAT(known, SizeIs(1));
  EXPECT_EQ(known[0].workload_uuid, "u70") << "now u232 is the oldest";
  // A job of one workload always times it.
  runner::RunnerJob one = job;
  one.workloads.resize(1);
  EXPECT_THAT(times.Lookup(Gpu(0), one), IsEmpty());
}

TEST(ReferenceTimes, AFigureThatDriftedDropsEveryOtherFigureOfItsGpu) {
  FakeClock clock;
  ReferenceTimes times(absl::Seconds(600), &clock);
  runner::RunnerJob job = Job();
  job.workloads.push_back({"u972", {{"M", 972}}, {}});
  times.Store(Gpu(0), job, {{"u70", "cuBLAS", 0.0393, ""}, {"u232", "cuBLAS", 0.0428, ""}});
  times.Store(Gpu(1), job, {{"u232", "cuBLAS", 0.0428, ""}});
  clock.Advance(absl::Seconds(30));
  // A hot card: the reference reads 5% slower.
  const std::string drift = times.Store(Gpu(0), job, {{"u70", "cuBLAS", 0.0413, ""}});
  EXPECT_THAT(drift, HasSubstr("u70"));
  EXPECT_THAT(drift, HasSubstr("0.0413 ms against 0.0393 ms 30 s before"));
  std::vector<runner::KnownReference> known = times.Lookup(Gpu(0), job);
  ASSERT_THAT(known, SizeIs(1));  // only the fresh figure; u232 and u972 are timed again
  EXPECT_EQ(known[0].workload_uuid, "u70");
  EXPECT_DOUBLE_EQ(known[0].ms, 0.0413);
  EXPECT_THAT(times.Lookup(Gpu(1), job), SizeIs(1)) << "another GPU keeps its figures";
}

TEST(ReferenceTimes, AnythingThatCouldChangeTheFigureIsAnotherKey) {
  FakeClock clock;
  ReferenceTimes times(absl::Seconds(600), &clock);
  runner::RunnerJob job = Job();
  job.workloads.push_back({"u972", {{"M", 972}}, {}});  // never timed: no figure is held back
  times.Store(Gpu(0), job, {{"u70", "cuBLAS", 0.0393, ""}, {"u232", "cuBLAS", 0.0428, ""}});
  ASSERT_THAT(times.Lookup(Gpu(0), job), SizeIs(2));
  EXPECT_THAT(times.Lookup(Gpu(1), job), IsEmpty()) << "another GPU";
  runner::RunnerJob other = job;
  other.definition_json = "{\"name\": \"gemm\", \"tolerance\": {}}";
  EXPECT_THAT(times.Lookup(Gpu(0), other), IsEmpty()) << "another definition text";
  other = job;
  other.workloads[0].axes["M"] = 71;
  EXPECT_THAT(times.Lookup(Gpu(0), other), SizeIs(1)) << "the same uuid with other axes";
  other = job;
  other.workloads[0].fixed = {{"eps", "1e-06", "", ""}};
  EXPECT_THAT(times.Lookup(Gpu(0), other), SizeIs(1)) << "a fixed input";
  other = job;
  other.reference = runner::ReferenceChoice::kPyTorch;
  EXPECT_THAT(times.Lookup(Gpu(0), other), IsEmpty()) << "another reference";
  other = job;
  other.timed_calls = 20;
  EXPECT_THAT(times.Lookup(Gpu(0), other), IsEmpty()) << "another timing method";
}

TEST(ReferenceTimes, IgnoresFiguresOfWorkloadsTheJobDidNotHold) {
  FakeClock clock;
  ReferenceTimes times(absl::Seconds(600), &clock);
  runner::RunnerJob job = Job();
  times.Store(Gpu(0), job, {{"u-other", "cuBLAS", 1.0, ""}});
  job.workloads.push_back({"u-other", {{"M", 1}}, {}});
  EXPECT_THAT(times.Lookup(Gpu(0), job), IsEmpty());
}

TEST(ReferenceTimes, ZeroAgeReusesNothing) {
  FakeClock clock;
  ReferenceTimes times(absl::ZeroDuration(), &clock);
  times.Store(Gpu(0), Job(), {{"u70", "cuBLAS", 0.0393, ""}});
  EXPECT_THAT(times.Lookup(Gpu(0), Job()), IsEmpty());
}

}  // namespace
}  // namespace ptxbench::worker
