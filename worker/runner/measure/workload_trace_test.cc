#include "worker/runner/measure/workload_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace ptxbench::runner {
namespace {

namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(CallSeed, EveryCallHasItsOwnStableSeed) {
  std::set<uint64_t> seeds;
  for (const char* phase : {"check", "time", "ref", "compare"}) {
    for (int trial = 0; trial < 3; ++trial) {
      for (int call = 0; call < 20; ++call) seeds.insert(CallSeed(7, "u1", phase, trial, call));
    }
  }
  EXPECT_EQ(seeds.size(), 4u * 3 * 20);
  EXPECT_EQ(CallSeed(7, "u1", "time", 1, 2), CallSeed(7, "u1", "time", 1, 2));
  EXPECT_NE(CallSeed(7, "u1", "time", 1, 2), CallSeed(8, "u1", "time", 1, 2));
  EXPECT_NE(CallSeed(7, "u1", "time", 1, 2), CallSeed(7, "u2", "time", 1, 2));
}

TEST(FailedTrace, CarriesTheWorkloadStatusAndError) {
  WorkloadSpec w{"u1", {{"M", 70}, {"N", 7168}}, {}};
  v1::WorkloadTrace t = FailedTrace(w, v1::RUNTIME_ERROR, "not run");
  EXPECT_EQ(t.workload_uuid(), "u1");
  EXPECT_EQ(t.axes().at("M"), 70);
  EXPECT_EQ(t.status(), v1::RUNTIME_ERROR);
  ASSERT_EQ(t.errors_size(), 1);
  EXPECT_EQ(t.errors(0), "not run");
  // SetIdentity replaces the axes a trace had (a load failure copied to
  // every workload).
  SetIdentity(t, WorkloadSpec{"u2", {{"M", 8192}}, {}});
  EXPECT_EQ(t.workload_uuid(), "u2");
  EXPECT_EQ(t.axes_size(), 1);
  EXPECT_EQ(t.axes().at("M"), 8192);
}

TEST(MethodLine, SaysHowTheWorkloadWasMeasured) {
  RunnerJob job;
  job.seed = 42;
  job.warmup_calls = 3;
  job.timed_calls = 9;
  const std::string line = MethodLine("NVIDIA H200", job, 5);
  EXPECT_THAT(line, HasSubstr("gpu NVIDIA H200"));
  EXPECT_THAT(line, HasSubstr("seed 42"));
  EXPECT_THAT(line, HasSubstr("5 trials, 3 warm-up + 9 timed calls"));
}

// The worker's own seed is the same for every evaluation: shown in one's
// feedback, it would give the model every later evaluation's inputs.
TEST(MethodLine, NeverShowsAFixedSeed) {
  RunnerJob job;
  job.seed = 987654321;
  job.seed_fixed = true;
  const std::string line = MethodLine("NVIDIA H200", job, 5);
  EXPECT_THAT(line, Not(HasSubstr("987654321")));
  EXPECT_THAT(line, HasSubstr("the worker's fixed seed"));
}

TEST(JudgeCall, EachEndingHasItsStatusAndConsequences) {
  const CallVerdict ok = JudgeCall({CallEnd::kOk, "", 0.5}, false);
  EXPECT_EQ(ok.status, v1::PASSED);
  EXPECT_FALSE(ok.stop || ok.candidate_failed || ok.kill);
  EXPECT_TRUE(ok.error.empty());

  // A refusal fails the workload; the host goes on unless the call's work
  // holds the stream.
  const CallVerdict refused = JudgeCall({CallEnd::kRefused, "bad shape"}, false);
  EXPECT_EQ(refused.status, v1::RUNTIME_ERROR);
  EXPECT_EQ(refused.error, "run() failed: bad shape");
  EXPECT_FALSE(refused.stop || refused.candidate_failed || refused.kill);
  const CallVerdict stuck = JudgeCall({CallEnd::kRefused, "illegal address"}, true);
  EXPECT_TRUE(stuck.stop && stuck.candidate_failed);
  EXPECT_FALSE(stuck.kill);

  const CallVerdict gone = JudgeCall({CallEnd::kGone, "the host exited (status 1)"}, false);
  EXPECT_EQ(gone.status, v1::RUNTIME_ERROR);
  EXPECT_EQ(gone.error, "the host exited (status 1)");
  EXPECT_TRUE(gone.stop && gone.candidate_failed);
  EXPECT_FALSE(gone.kill);

  const CallVerdict timeout = JudgeCall({CallEnd::kTimeout, "no reply within 30s"}, false);
  EXPECT_EQ(timeout.status, v1::TIMEOUT);
  EXPECT_TRUE(timeout.stop && timeout.candidate_failed && timeout.kill);

  // The harness's own failure is never the candidate's.
  const CallVerdict infra = JudgeCall({CallEnd::kInfra, "cudaEventRecord failed"}, false);
  EXPECT_EQ(infra.status, v1::INFRA_ERROR);
  EXPECT_TRUE(infra.stop);
  EXPECT_FALSE(infra.candidate_failed || infra.kill);
}

TEST(NoteCheck, KeepsTheWorstOfEachFigure) {
  v1::WorkloadTrace t;
  NoteCheck({true, {}, 0.01, 0.002, 0.999}, true, &t);
  NoteCheck({true, {}, 0.005, 0.004, 1.0}, false, &t);
  NoteCheck({true, {}, 0.002, 0.001, 0.998}, false, &t);
  EXPECT_DOUBLE_EQ(t.max_abs_error(), 0.01);
  EXPECT_DOUBLE_EQ(t.max_rel_error(), 0.004);
  EXPECT_DOUBLE_EQ(t.matched_ratio(), 0.998);
}

TEST(TimingTally, WarmUpIsCheckedButNotCountedAndTrialsAreAveraged) {
  TimingTally tally(/*overhead_ms=*/0.010, /*tolerance_ms=*/0.005, /*warmup_calls=*/2);
  std::string log;
  // Trial 0: two slow warm-up calls, then latencies 0.1, 0.2, 0.3.
  int call = 0;
  for (double bracket : {5.0, 5.0, 0.110, 0.210, 0.310}) {
    EXPECT_EQ(tally.Add(0, call++, bracket), std::nullopt);
  }
  tally.EndTrial(0, 5, &log);
  // Trial 1: median 0.4.
  call = 0;
  for (double bracket : {9.0, 9.0, 0.410, 0.410, 0.910}) {
    EXPECT_EQ(tally.Add(1, call++, bracket), std::nullopt);
  }
  tally.EndTrial(1, 5, &log);
  EXPECT_NEAR(tally.latency_ms(), (0.2 + 0.4) / 2, 1e-12);
  EXPECT_NEAR(tally.bracketed_ms(), 10.63 + 19.73, 1e-9);
  EXPECT_THAT(log, HasSubstr("candidate trial 0: median 0.2000 ms (min 0.1000, max 0.3000"));
  EXPECT_THAT(log, HasSubstr("candidate trial 1: median 0.4000 ms"));
  EXPECT_THAT(log, HasSubstr("all 5 calls' outputs checked"));
}

TEST(TimingTally, ABracketShorterThanAnEmptyCallIsTampering) {
  TimingTally tally(/*overhead_ms=*/0.020, /*tolerance_ms=*/0.005, /*warmup_calls=*/0);
  // Within the tolerance below the overhead: noise, counted as ~0.
  EXPECT_EQ(tally.Add(0, 0, 0.016), std::nullopt);
  std::string log;
  tally.EndTrial(0, 1, &log);
  EXPECT_GT(tally.latency_ms(), 0);
  EXPECT_LT(tally.latency_ms(), 1e-5);
  // Beyond it: the synchronization was tampered with, even in a warm-up.
  TimingTally warm(0.020, 0.005, 10);
  std::optional<std::string> error = warm.Add(2, 3, 0.010);
  ASSERT_TRUE(error.has_value());
  EXPECT_THAT(*error, HasSubstr("integrity check failed at timed call 3 (trial 2)"));
  EXPECT_THAT(*error, HasSubstr("bracket (0.0100 ms) is shorter than the calibrated cost of a "
                                "call (0.0200 ms, tolerance 0.0050 ms)"));
}

TEST(TimingTally, NoTrialsMeansNoLatency) {
  TimingTally tally(0.01, 0.005, 0);
  EXPECT_EQ(tally.latency_ms(), 0);
}

TEST(WrongTimedCallError, NamesTheCallAndWhatIsRequired) {
  EXPECT_THAT(WrongTimedCallError(1, 7), HasSubstr("timed call 7 (trial 1, fresh inputs)"));
}

}  // namespace
}  // namespace ptxbench::runner
