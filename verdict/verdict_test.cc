#include "verdict/verdict.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace ptxbench::verdict {
namespace {

namespace v1 = ::ptxbench::v1;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An EvalResult with one trace per (status, speedup), summarized.
v1::EvalResult Summarized(std::vector<std::pair<v1::EvalStatus, double>> traces) {
  v1::EvalResult r;
  for (const auto& [status, speedup] : traces) {
    v1::WorkloadTrace* t = r.add_traces();
    t->set_status(status);
    t->set_speedup(speedup);
  }
  Summarize(r);
  return r;
}

TEST(VerdictTest, AllPassedGivesTheLeastSpeedupAndIsCorrect) {
  const v1::EvalResult r = Summarized({{v1::PASSED, 1.5}, {v1::PASSED, 0.8}, {v1::PASSED, 2.0}});
  EXPECT_EQ(r.status(), v1::PASSED);
  EXPECT_TRUE(r.all_passed());
  EXPECT_DOUBLE_EQ(r.min_speedup(), 0.8);
  EXPECT_TRUE(Correct(r));
  EXPECT_DOUBLE_EQ(MinSpeedup(r), 0.8);
  EXPECT_NEAR(KernelSpeedup(r), std::cbrt(1.5 * 0.8 * 2.0), 1e-12);
}

TEST(VerdictTest, AFailedWorkloadGivesItsStatusAndNoSpeedup) {
  const v1::EvalResult r =
      Summarized({{v1::PASSED, 1.5}, {v1::INCORRECT_NUMERICAL, 0}, {v1::RUNTIME_ERROR, 0}});
  EXPECT_EQ(r.status(), v1::INCORRECT_NUMERICAL);  // the first failure, in trace order
  EXPECT_FALSE(r.all_passed());
  EXPECT_EQ(r.min_speedup(), 0);  // not the passed workload's 1.5
  EXPECT_FALSE(Correct(r));
  EXPECT_FALSE(TargetMet(r, 0));
}

TEST(VerdictTest, NoTracesIsNeverCorrect) {
  v1::EvalResult r;
  Summarize(r);
  EXPECT_EQ(r.status(), v1::PASSED);
  EXPECT_FALSE(r.all_passed());
  EXPECT_EQ(r.min_speedup(), 0);
  EXPECT_FALSE(Correct(r));
  EXPECT_EQ(KernelSpeedup(r), 0);
  EXPECT_EQ(RooflineFraction(r), 0);
  // Even when the flags say so: a result with no trace proves nothing.
  r.set_all_passed(true);
  r.set_min_speedup(3);
  EXPECT_FALSE(Correct(r));
  EXPECT_FALSE(TargetMet(r, 1));
  EXPECT_EQ(MinSpeedup(r), 0);
}

TEST(VerdictTest, AWorkloadNotTimedIsLeftOutOfTheMinimumButZeroesTheMean) {
  for (double untimed : {0.0, -1.0, kNaN}) {
    const v1::EvalResult r = Summarized({{v1::PASSED, 1.5}, {v1::PASSED, untimed}});
    EXPECT_TRUE(Correct(r));
    EXPECT_DOUBLE_EQ(r.min_speedup(), 1.5) << untimed;
    EXPECT_EQ(KernelSpeedup(r), 0) << untimed;
  }
  const v1::EvalResult none = Summarized({{v1::PASSED, 0}, {v1::PASSED, kNaN}});
  EXPECT_TRUE(Correct(none));
  EXPECT_EQ(none.min_speedup(), 0);
  EXPECT_FALSE(TargetMet(none, 0.5));
  EXPECT_TRUE(TargetMet(none, 0));  // a target of 0: correctness alone
}

TEST(VerdictTest, AnInfiniteSpeedupCountsOnlyBesideAFiniteOne) {
  const v1::EvalResult mixed = Summarized({{v1::PASSED, kInf}, {v1::PASSED, 1.25}});
  EXPECT_DOUBLE_EQ(mixed.min_speedup(), 1.25);
  EXPECT_EQ(KernelSpeedup(mixed), 0);  // not a finite mean
  const v1::EvalResult only = Summarized({{v1::PASSED, kInf}});
  EXPECT_EQ(only.min_speedup(), 0);
  EXPECT_FALSE(TargetMet(only, 1));
}

TEST(VerdictTest, TargetMetComparesTheMinimumNotTheMean) {
  const v1::EvalResult r = Summarized({{v1::PASSED, 4.0}, {v1::PASSED, 1.0}});
  EXPECT_DOUBLE_EQ(KernelSpeedup(r), 2.0);
  EXPECT_TRUE(TargetMet(r, 1.0));  // at least: equal meets it
  EXPECT_FALSE(TargetMet(r, 1.5));  // the mean (2.0) would have met it
  EXPECT_TRUE(ReachesTarget(1.5, 1.5));
  EXPECT_FALSE(ReachesTarget(kNaN, 0));
}

TEST(VerdictTest, FlagsAndTracesMustAgreeToBeCorrect) {
  v1::EvalResult r = Summarized({{v1::PASSED, 2.0}});
  ASSERT_TRUE(Correct(r));
  v1::EvalResult flag = r;
  flag.set_all_passed(false);
  EXPECT_FALSE(Correct(flag));
  v1::EvalResult status = r;
  status.set_status(v1::INCORRECT_NUMERICAL);
  EXPECT_FALSE(Correct(status));
  v1::EvalResult trace = r;
  trace.mutable_traces(0)->set_status(v1::RUNTIME_ERROR);  // a result that lies about its traces
  EXPECT_FALSE(Correct(trace));
  EXPECT_FALSE(TargetMet(trace, 1));
  EXPECT_EQ(MinSpeedup(trace), 0);
}

TEST(VerdictTest, ALibraryFallbackIsNotCorrectAndHasNoSpeedup) {
  v1::EvalResult r;
  for (int i = 0; i < 2; ++i) {
    v1::WorkloadTrace* t = r.add_traces();
    t->set_status(i == 0 ? v1::PASSED : v1::LIBRARY_FALLBACK);
    t->set_speedup(i == 0 ? 1.4 : 0);  // the harness: a fallback's speedup is 0
    if (i == 1) t->mutable_census()->set_outputs_correct(true);
  }
  Summarize(r);
  EXPECT_EQ(r.status(), v1::LIBRARY_FALLBACK);
  EXPECT_FALSE(r.all_passed());
  EXPECT_EQ(r.min_speedup(), 0);
  EXPECT_FALSE(Correct(r));
  EXPECT_TRUE(FallbackCorrect(r));
  const Verdict v = Judge(r);
  EXPECT_FALSE(v.correct);
  EXPECT_TRUE(v.fallback_correct);
  EXPECT_EQ(v.min_speedup, 0);
  EXPECT_EQ(v.kernel_speedup, 0);
}

TEST(VerdictTest, JudgeKeepsTheFiguresOfACorrectEvaluationOnly) {
  v1::EvalResult r = Summarized({{v1::PASSED, 2.0}, {v1::PASSED, 0.5}});
  r.mutable_traces(0)->set_roofline_fraction(0.4);
  r.mutable_traces(1)->set_roofline_fraction(kNaN);  // unknown: left out
  Verdict v = Judge(r);
  EXPECT_TRUE(v.correct);
  EXPECT_DOUBLE_EQ(v.min_speedup, 0.5);
  EXPECT_DOUBLE_EQ(v.kernel_speedup, 1.0);
  EXPECT_DOUBLE_EQ(v.roofline, 0.4);
  r.set_min_speedup(7);  // an inconsistent field is what the verdict reports, when correct
  r.mutable_traces(1)->set_status(v1::INCORRECT_SHAPE);
  v = Judge(r);
  EXPECT_FALSE(v.correct);
  EXPECT_EQ(v.min_speedup, 0);
  EXPECT_EQ(v.kernel_speedup, 0);
  EXPECT_EQ(v.roofline, 0);
}

TEST(VerdictTest, RooflineIsTheMeanOfTheKnownFractions) {
  v1::EvalResult r;
  for (double f : {0.2, 0.0, 0.6, kInf}) r.add_traces()->set_roofline_fraction(f);
  EXPECT_DOUBLE_EQ(RooflineFraction(r), 0.4);
}

v1::EvalResult FallbackResult(std::vector<std::pair<v1::EvalStatus, bool>> traces) {
  v1::EvalResult r;
  r.set_status(v1::LIBRARY_FALLBACK);
  for (const auto& [status, outputs_correct] : traces) {
    v1::WorkloadTrace* t = r.add_traces();
    t->set_status(status);
    if (status == v1::LIBRARY_FALLBACK) t->mutable_census()->set_outputs_correct(outputs_correct);
  }
  return r;
}

// The one rule of a fallback that the checks would have passed (moved here
// from results/report/metrics_test.cc with the rule).
TEST(VerdictTest, AFallbackIsCorrectByChecksOnlyWhenNoTraceFailedACheck) {
  EXPECT_TRUE(FallbackCorrect(FallbackResult({{v1::LIBRARY_FALLBACK, true}})));
  EXPECT_TRUE(FallbackCorrect(
      FallbackResult({{v1::PASSED, false}, {v1::LIBRARY_FALLBACK, true}})));
  EXPECT_FALSE(FallbackCorrect(FallbackResult({{v1::LIBRARY_FALLBACK, false}})));
  EXPECT_FALSE(FallbackCorrect(
      FallbackResult({{v1::LIBRARY_FALLBACK, true}, {v1::INCORRECT_NUMERICAL, false}})));
  EXPECT_FALSE(FallbackCorrect(
      FallbackResult({{v1::LIBRARY_FALLBACK, true}, {v1::RUNTIME_ERROR, false}})));
  EXPECT_FALSE(FallbackCorrect(FallbackResult({})));  // found at the build: nothing ran
  EXPECT_FALSE(FallbackCorrect(FallbackResult({{v1::PASSED, false}})));
  v1::EvalResult no_census = FallbackResult({{v1::LIBRARY_FALLBACK, true}});
  no_census.mutable_traces(0)->clear_census();
  EXPECT_FALSE(FallbackCorrect(no_census));
  v1::EvalResult passed = FallbackResult({{v1::LIBRARY_FALLBACK, true}});
  passed.set_status(v1::INCORRECT_NUMERICAL);  // the result's own status decides first
  EXPECT_FALSE(FallbackCorrect(passed));
}

// A result of three workloads "a", "b", "c" (in that order), summarized.
v1::EvalResult ThreeWorkloads(v1::EvalStatus c_status, double c_speedup) {
  v1::EvalResult r = Summarized({{v1::PASSED, 1.5}, {v1::PASSED, 2.0}, {c_status, c_speedup}});
  r.mutable_traces(0)->set_workload_uuid("a");
  r.mutable_traces(1)->set_workload_uuid("b");
  r.mutable_traces(2)->set_workload_uuid("c");
  return r;
}

TEST(VerdictTest, TheShownPartIsJudgedOnTheShownWorkloadsAlone) {
  // Held out, "c" failed: the whole is incorrect, the shown part correct
  // with the shown workloads' least speedup; nothing of "c" is left.
  const v1::EvalResult all = ThreeWorkloads(v1::INCORRECT_NUMERICAL, 0);
  ASSERT_FALSE(Correct(all));
  const v1::EvalResult shown = ShownPart(all, {"c"});
  EXPECT_TRUE(Correct(shown));
  EXPECT_EQ(shown.status(), v1::PASSED);
  EXPECT_DOUBLE_EQ(shown.min_speedup(), 1.5);
  ASSERT_EQ(shown.traces_size(), 2);
  for (const v1::WorkloadTrace& t : shown.traces()) EXPECT_NE(t.workload_uuid(), "c");

  // The held-out workload's speedup sets no minimum of the shown part.
  const v1::EvalResult slow = ShownPart(ThreeWorkloads(v1::PASSED, 0.2), {"c"});
  EXPECT_DOUBLE_EQ(slow.min_speedup(), 1.5);
  EXPECT_DOUBLE_EQ(ThreeWorkloads(v1::PASSED, 0.2).min_speedup(), 0.2);
}

TEST(VerdictTest, TheShownPartKeepsNoReportOfAHeldOutWorkload) {
  v1::EvalResult all = ThreeWorkloads(v1::RUNTIME_ERROR, 0);
  all.set_error("from the run");
  all.mutable_memcheck()->set_workload_uuid("c");
  all.mutable_profile()->set_workload_uuid("c");
  const v1::EvalResult shown = ShownPart(all, {"c"});
  EXPECT_FALSE(shown.has_memcheck());
  EXPECT_FALSE(shown.has_profile());
  EXPECT_EQ(shown.error(), "");  // its status changed: the error was of the whole

  all.mutable_memcheck()->set_workload_uuid("a");
  all.mutable_profile()->set_workload_uuid("b");
  const v1::EvalResult kept = ShownPart(all, {"c"});
  EXPECT_EQ(kept.memcheck().workload_uuid(), "a");
  EXPECT_EQ(kept.profile().workload_uuid(), "b");
}

TEST(VerdictTest, WithNothingHeldOutOrNoTracesTheShownPartIsTheResult) {
  const v1::EvalResult all = ThreeWorkloads(v1::INCORRECT_NUMERICAL, 0);
  EXPECT_EQ(ShownPart(all, {}).SerializeAsString(), all.SerializeAsString());
  v1::EvalResult failed_build;
  failed_build.set_status(v1::COMPILE_ERROR);
  failed_build.set_compile_log("error: ...");
  EXPECT_EQ(ShownPart(failed_build, {"c"}).SerializeAsString(), failed_build.SerializeAsString());
}

}  // namespace
}  // namespace ptxbench::verdict
