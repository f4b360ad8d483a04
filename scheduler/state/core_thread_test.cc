// Core runs on the writer thread only, and checks it once bound to one.
#include <memory>

#include "gtest/gtest.h"
#include "scheduler/state/core.h"
#include "scheduler/state/core_test_util.h"
#include "storage/write_queue.h"

namespace ptxbench::scheduler {
namespace {

class CoreThreadTest : public CoreFixture {
 protected:
  void SetUp() override {
    CoreFixture::SetUp();
    auto db = OpenSchedulerDatabase(":memory:");
    ASSERT_TRUE(db.ok()) << db.status();
    queue_ = std::make_unique<storage::WriteQueue>(*std::move(db),
                                                   storage::WriteQueue::Options{});
    core_->BindToWriterThread(queue_.get());
    queue_->Start();
  }
  void TearDown() override { queue_->Stop(); }

  std::unique_ptr<storage::WriteQueue> queue_;
};

TEST_F(CoreThreadTest, RunsOnTheWriterThread) {
  absl::Status ticked = queue_->RunSync([&](storage::Database&) { return core_->Tick(); });
  EXPECT_TRUE(ticked.ok()) << ticked;
}

TEST_F(CoreThreadTest, AbortsOffTheWriterThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)core_->Tick(), "off the writer thread");
  EXPECT_DEATH((void)core_->IsKnownExecutor("gw"), "off the writer thread");
}

using UnboundCoreTest = CoreFixture;

TEST_F(UnboundCoreTest, RunsOnAnyThread) {
  EXPECT_TRUE(core_->Tick().ok());
}

}  // namespace
}  // namespace ptxbench::scheduler
