#include "worker/stop_guard.h"

#include <atomic>

#include "gtest/gtest.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;

// Returns `result`, after a stop signal when `signal_during` (the counter
// moves while it runs, as the watcher's does).
class FakeHandler final : public executor::TaskHandler {
 public:
  v1::CompleteRequest Run(const v1::Task&, const std::atomic<bool>&) override {
    if (signal_during) ++signals;
    return result;
  }
  v1::CompleteRequest result;
  bool signal_during = false;
  int signals = 0;
};

v1::CompleteRequest Eval(v1::EvalStatus status) {
  v1::CompleteRequest r;
  r.mutable_eval()->set_status(status);
  return r;
}

class StopSignalGuardTest : public ::testing::Test {
 protected:
  v1::CompleteRequest Run(v1::CompleteRequest result, bool signal_during) {
    inner_.result = std::move(result);
    inner_.signal_during = signal_during;
    StopSignalGuard guard(&inner_, [this] { return inner_.signals; });
    std::atomic<bool> cancelled = false;
    return guard.Run(v1::Task(), cancelled);
  }
  FakeHandler inner_;
};

TEST_F(StopSignalGuardTest, AnEndMidwayAfterAStopSignalIsHandedBack) {
  for (v1::EvalStatus status : {v1::COMPILE_ERROR, v1::RUNTIME_ERROR, v1::TIMEOUT}) {
    v1::CompleteRequest out = Run(Eval(status), /*signal_during=*/true);
    ASSERT_TRUE(out.has_failure()) << v1::EvalStatus_Name(status);
    EXPECT_EQ(out.failure().failure_class(), v1::INFRA);
    EXPECT_NE(out.failure().message().find(v1::EvalStatus_Name(status) +
                                           " after the worker got a stop signal"),
              std::string::npos)
        << out.failure().message();
  }
}

// One workload that crashed is enough, whatever the evaluation's status.
TEST_F(StopSignalGuardTest, AWorkloadEndedMidwayIsEnough) {
  v1::CompleteRequest r = Eval(v1::INCORRECT_NUMERICAL);
  r.mutable_eval()->add_traces()->set_status(v1::INCORRECT_NUMERICAL);
  r.mutable_eval()->add_traces()->set_status(v1::RUNTIME_ERROR);
  EXPECT_TRUE(Run(r, true).has_failure());
}

TEST_F(StopSignalGuardTest, ResultsStandWithoutASignalAndVerdictsOfFinishedChecksWithOne) {
  EXPECT_EQ(Run(Eval(v1::RUNTIME_ERROR), false).eval().status(), v1::RUNTIME_ERROR);
  for (v1::EvalStatus status : {v1::PASSED, v1::COMPILED, v1::INCORRECT_NUMERICAL,
                                v1::INCORRECT_SHAPE, v1::INCORRECT_DTYPE, v1::LIBRARY_FALLBACK}) {
    EXPECT_EQ(Run(Eval(status), true).eval().status(), status) << v1::EvalStatus_Name(status);
  }
  // A signal taken before the evaluation started changes nothing.
  inner_.signals = 3;
  EXPECT_EQ(Run(Eval(v1::COMPILE_ERROR), false).eval().status(), v1::COMPILE_ERROR);
  // Reports that are not an evaluation's pass through.
  v1::CompleteRequest failure = executor::FailureReport(v1::INFRA, "no GPU");
  EXPECT_EQ(Run(failure, true).failure().message(), "no GPU");
}

}  // namespace
}  // namespace ptxbench::worker
