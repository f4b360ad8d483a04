// Submitting in parts (Core::BeginSubmit, Dispatcher::Submit): an experiment
// is all or nothing to every reader, a part that fails leaves nothing, a
// restart deletes a submission it cut short, and other ops run between parts.
#include <filesystem>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "scheduler/read/reader.h"
#include "scheduler/state/core_test_util.h"
#include "scheduler/state/dispatcher.h"
#include "scheduler/store/counts.h"

namespace ptxbench::scheduler {

using experiment_spec::ExpandedExperiment;
using experiment_spec::RenderedPrompts;

namespace {

namespace v1 = ::ptxbench::v1;

class CoreSubmitTest : public CoreFixture {
 protected:
  std::string DatabasePath() override {
    path_ = ::testing::TempDir() + "/core_submit_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    std::filesystem::remove(path_);
    return path_;
  }
  std::unique_ptr<Reader> OpenReader() {
    auto db = OpenReadOnly(path_);
    EXPECT_TRUE(db.ok()) << db.status();
    return std::make_unique<Reader>(*std::move(db));
  }
  std::string path_;
};

TEST_F(CoreSubmitTest, AStagedExperimentIsSeenByNoReaderAndGoneAfterARestart) {
  const std::string gateway = RegisterGateway();
  const ExpandedExperiment x = MakeExperiment("staged", 10, 2);
  const RenderedPrompts prompts = PromptsFor(x);
  absl::StatusOr<StagedSubmit> staged = core_->BeginSubmit(x, prompts);
  ASSERT_TRUE(staged.ok()) << staged.status();
  ASSERT_TRUE(core_->SubmitPart(x, 4, *staged).ok());
  EXPECT_EQ(staged->written, 4u);
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories"), 4);

  std::unique_ptr<Reader> reader = OpenReader();
  EXPECT_EQ(reader->GetExperiment("staged").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(reader->GetExperiment(x.experiment_id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(reader->ListExperiments()->experiments_size(), 0);
  EXPECT_TRUE(reader->TrajectoriesByState()->empty());
  EXPECT_EQ(reader->GetTrajectory(x.trajectories[0].trajectory_id).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(core_->CancelTrajectory(x.trajectories[0].trajectory_id).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(core_->CancelExperiment(x.experiment_id).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(NothingFor(gateway)) << "a task of a staged experiment was leased";
  // The same name again while it is staged: refused, nothing written.
  EXPECT_EQ(core_->Submit(x, prompts).status().code(), absl::StatusCode::kFailedPrecondition);

  Restart();  // as after a crash between parts
  EXPECT_EQ(Count("SELECT count(*) FROM experiments"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM tasks"), 0);
  absl::StatusOr<std::vector<std::string>> counts = CheckCounts(*db_);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_TRUE(counts->empty()) << (*counts)[0];
  // And it can be submitted again, whole.
  EXPECT_EQ(Submit(x), x.experiment_id);
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories"), 10);
}

TEST_F(CoreSubmitTest, AnExperimentSubmittedInPartsIsTheSameAsOneSubmittedWhole) {
  const std::string gateway = RegisterGateway();
  const ExpandedExperiment x = MakeExperiment("parts", 10, 2);
  const RenderedPrompts prompts = PromptsFor(x);
  absl::StatusOr<StagedSubmit> staged = core_->BeginSubmit(x, prompts);
  ASSERT_TRUE(staged.ok()) << staged.status();
  while (staged->written < x.trajectories.size()) {
    ASSERT_TRUE(core_->SubmitPart(x, 3, *staged).ok());
  }
  ASSERT_TRUE(core_->FinishSubmit(x, *staged).ok());
  EXPECT_TRUE(staged->outcome.created);
  EXPECT_EQ(staged->outcome.trajectories, 10);
  const ExpandedExperiment whole = MakeExperiment("whole", 10, 2);
  EXPECT_EQ(Submit(whole), whole.experiment_id);

  std::unique_ptr<Reader> reader = OpenReader();
  for (const std::string name : {"parts", "whole"}) {
    absl::StatusOr<v1::GetExperimentResponse> e = reader->GetExperiment(name);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->progress().total(), 10) << name;
    EXPECT_EQ(e->progress().tasks_queued(), 10) << name;
  }
  for (int i = 0; i < 20; ++i) MustLease(gateway);
  EXPECT_TRUE(NothingFor(gateway));
  // The same spec again is the same experiment: nothing new.
  absl::StatusOr<SubmitOutcome> again = core_->Submit(x, prompts);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->trajectories, 10);
}

// A whole-experiment change made in parts of `max`: its parts, run to the end.
template <typename Part>
int64_t InParts(int max, Part part, int* parts = nullptr) {
  WritePart at;
  int n = 0;
  while (!at.done) {
    absl::Status status = part(max, at);
    EXPECT_TRUE(status.ok()) << status;
    if (!status.ok() || ++n > 1000) break;
  }
  if (parts != nullptr) *parts = n;
  return at.changed;
}

TEST_F(CoreSubmitTest, ACancelInPartsCancelsEveryLiveTrajectoryOnce) {
  const std::string exp = Submit(MakeExperiment("cancel", 10, 3));
  const std::string gateway = RegisterGateway();
  ASSERT_TRUE(CompleteLlm(MustLease(gateway)).ok());  // one now awaits its evaluation
  int parts = 0;
  EXPECT_EQ(InParts(3, [&](int max, WritePart& at) {
              return core_->CancelExperiment(exp, max, at);
            }, &parts),
            10);
  EXPECT_EQ(parts, 4);
  EXPECT_EQ(TrajectoriesIn(v1::CANCELLED), 10);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'experiment.cancelled'"), 1);
  EXPECT_TRUE(NothingFor(gateway));
}

TEST_F(CoreSubmitTest, ARetryInPartsPassesOverTheFailuresItLeaves) {
  const std::string exp = Submit(MakeExperiment("retry", 7, 3));
  const std::string gateway = RegisterGateway();
  options_.max_api_failures = 1;
  Restart();
  // Failed alternately by the model's API (retried) and for good (left).
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(Fail(MustLease(gateway), i % 2 == 0 ? v1::MODEL_API : v1::TERMINAL).ok());
  }
  EXPECT_EQ(TrajectoriesIn(v1::FAILED), 7);
  EXPECT_EQ(InParts(2, [&](int max, WritePart& at) {
              return core_->Retry(exp, v1::RETRY_API, max, at);
            }),
            4);
  EXPECT_EQ(TrajectoriesIn(v1::FAILED), 3);
  EXPECT_EQ(TrajectoriesIn(v1::AWAITING_MODEL), 4);
}

TEST_F(CoreSubmitTest, AnExtendInPartsRaisesEveryLimitAndResumesThoseThatHitIt) {
  const std::string exp = Submit(MakeExperiment("extend", 8, 1));
  const std::string gateway = RegisterGateway(), worker = RegisterWorker();
  for (int i = 0; i < 5; ++i) {  // five reach the limit of 1; three still wait
    ASSERT_TRUE(CompleteLlm(MustLease(gateway)).ok());
    ASSERT_TRUE(CompleteEval(MustLease(worker), v1::PASSED, 1.0).ok());
  }
  EXPECT_EQ(TrajectoriesIn(v1::LIMITS_EXCEEDED), 5);
  EXPECT_EQ(InParts(3, [&](int max, WritePart& at) {
              return core_->Extend(exp, 4, max, at);
            }),
            5);
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories WHERE num_turns = 4"), 8);
  EXPECT_EQ(Count("SELECT num_turns FROM experiments"), 4);
  EXPECT_EQ(TrajectoriesIn(v1::AWAITING_MODEL), 8);
  // A bad limit is refused by the first part, before anything changes.
  WritePart at;
  EXPECT_EQ(core_->Extend(exp, 2, 3, at).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(at.started);
}

// The Dispatcher's submissions, on a scheduler database file.
class DispatcherSubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/dispatcher_submit_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    std::filesystem::remove(path_);
    auto db = OpenSchedulerDatabase(path_);
    ASSERT_TRUE(db.ok()) << db.status();
    DispatcherOptions options;
    options.write_part = 3;
    dispatcher_ = std::make_unique<Dispatcher>(*std::move(db), Clock::Real(), options);
    ASSERT_TRUE(dispatcher_->Start().ok());
    auto read = OpenReadOnly(path_);
    ASSERT_TRUE(read.ok());
    read_ = *std::move(read);
  }

  absl::StatusOr<SubmitOutcome> Submit(const ExpandedExperiment& x) {
    absl::Notification done;
    absl::StatusOr<SubmitOutcome> out = absl::UnknownError("not done");
    dispatcher_->Submit(std::make_shared<ExpandedExperiment>(x),
                        std::make_shared<RenderedPrompts>(PromptsFor(x)),
                        [&](absl::StatusOr<SubmitOutcome> o) {
                          out = std::move(o);
                          done.Notify();
                        });
    done.WaitForNotification();
    return out;
  }

  std::string path_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<storage::Database> read_;
};

TEST_F(DispatcherSubmitTest, APartThatFailsLeavesNothingOfTheExperiment) {
  ExpandedExperiment x = MakeExperiment("broken", 10, 2);
  // The eighth trajectory repeats the first's id: the third part fails.
  x.trajectories[7].trajectory_id = x.trajectories[0].trajectory_id;
  absl::StatusOr<SubmitOutcome> out = Submit(x);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kAlreadyExists) << out.status();
  EXPECT_EQ(QueryInt(*read_, "SELECT count(*) FROM experiments"), 0);
  EXPECT_EQ(QueryInt(*read_, "SELECT count(*) FROM trajectories"), 0);
  EXPECT_EQ(QueryInt(*read_, "SELECT count(*) FROM tasks"), 0);
  absl::StatusOr<std::vector<std::string>> counts = CheckCounts(*read_);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_TRUE(counts->empty()) << (*counts)[0];
  // The name is free again.
  const ExpandedExperiment fixed = MakeExperiment("broken", 10, 2);
  out = Submit(fixed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->created);
  EXPECT_EQ(QueryInt(*read_, "SELECT count(*) FROM trajectories WHERE experiment IN "
                             "(SELECT rowid FROM experiments WHERE staged = 0)"),
            10);
}

// An op that posts itself again and again meanwhile (each time from the
// writer thread, so it queues behind the part posted before it) runs between
// the parts: it sees the experiment partly committed, which one op writing
// it whole would never show.
TEST_F(DispatcherSubmitTest, OtherOpsRunBetweenTheParts) {
  const ExpandedExperiment x = MakeExperiment("interleaved", 30, 1);
  std::atomic<bool> submitted{false};
  std::vector<int64_t> seen;  // the probe's, on the writer thread
  absl::Notification probes_done;
  std::function<void()> probe = [&] {
    dispatcher_->Run<int64_t>(
        [&](Core&) -> absl::StatusOr<int64_t> {
          seen.push_back(QueryInt(*read_, "SELECT count(*) FROM trajectories"));
          if (submitted.load() || seen.size() > 1000) {
            probes_done.Notify();
          } else {
            probe();
          }
          return 0;
        },
        [](absl::StatusOr<int64_t>) {});
  };
  probe();
  absl::StatusOr<SubmitOutcome> out = Submit(x);
  submitted.store(true);
  probes_done.WaitForNotification();
  ASSERT_TRUE(out.ok()) << out.status();
  int partly = 0;
  for (int64_t n : seen) partly += n > 0 && n < 30;
  EXPECT_GE(partly, 5) << "ops did not run between the parts of a 10-part submission";
  EXPECT_EQ(QueryInt(*read_, "SELECT count(*) FROM trajectories"), 30);
}

// A cancel through the Dispatcher in parts of 3: each part's op answers once.
TEST_F(DispatcherSubmitTest, ACancelInPartsAnswersOnceWithTheCount) {
  const ExpandedExperiment x = MakeExperiment("cancelled", 10, 2);
  ASSERT_TRUE(Submit(x).ok());
  for (int round = 0; round < 2; ++round) {
    absl::Notification done;
    std::atomic<int> answers{0};
    absl::StatusOr<int64_t> out = absl::UnknownError("not done");
    dispatcher_->RunInParts(
        [&](Core& core, int max, WritePart& at) {
          return core.CancelExperiment(x.experiment_id, max, at);
        },
        [&](absl::StatusOr<int64_t> n) {
          out = n;
          if (++answers == 1) done.Notify();
        });
    done.WaitForNotification();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(*out, round == 0 ? 10 : 0);  // nothing left to cancel the second time
    // A second answer would come right after the first.
    absl::SleepFor(absl::Milliseconds(200));
    EXPECT_EQ(answers.load(), 1);
  }
  EXPECT_EQ(QueryInt(*read_, "SELECT count(*) FROM trajectories WHERE state = " +
                                 SqlValue(v1::CANCELLED)),
            10);
}

}  // namespace
}  // namespace ptxbench::scheduler
