#include "storage/write_queue.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "storage/migrations.h"
#include "storage/test_util.h"

namespace ptxbench::storage {
namespace {

const std::vector<Migration> kSchema = {
    {1, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE NOT NULL);"}};

std::unique_ptr<Database> OpenDb(const std::string& path, absl::Duration busy_timeout,
                                 bool synchronous_full = false) {
  Database::Options options;
  options.busy_timeout = busy_timeout;
  options.synchronous_full = synchronous_full;
  auto db = OpenAndMigrate(path, options, 1, "test", kSchema);
  EXPECT_TRUE(db.ok()) << db.status();
  return std::move(db).value();
}

int64_t Count(Database& db, absl::string_view where = "1") {
  auto statement = db.Prepare(absl::StrCat("SELECT count(*) FROM t WHERE ", where));
  EXPECT_TRUE(statement.ok()) << statement.status();
  EXPECT_TRUE(statement->Step().value_or(false));
  return statement->ColumnInt64(0);
}

WriteQueue::Op Insert(std::string v) {
  return [v = std::move(v)](Database& db) -> absl::Status {
    PTXB_ASSIGN_OR_RETURN(Statement * insert, db.Cached("INSERT INTO t(v) VALUES (?1)"));
    insert->BindText(1, v);
    return insert->Run();
  };
}

class WriteQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reader_ = OpenDb(temp_.path(), absl::Seconds(10));
    queue_ = std::make_unique<WriteQueue>(OpenDb(temp_.path(), absl::Seconds(10)), options_);
  }
  // Occupies the writer thread until the returned notification is notified,
  // so the ops posted meanwhile are all waiting for the next batch.
  void BlockWriter(absl::Notification* release) {
    absl::Notification entered;
    queue_->Post(
        [&entered, release](Database&) {
          entered.Notify();
          release->WaitForNotification();
          return absl::OkStatus();
        },
        nullptr);
    entered.WaitForNotification();
  }

  testing::TempDbPath temp_;
  WriteQueue::Options options_;
  std::unique_ptr<Database> reader_;
  std::unique_ptr<WriteQueue> queue_;
};

TEST_F(WriteQueueTest, OpsFromSeveralThreadsShareCommits) {
  queue_->Start();
  absl::Notification release;
  BlockWriter(&release);
  constexpr int kThreads = 4, kPerThread = 500;
  absl::BlockingCounter posted(kThreads);
  absl::BlockingCounter done(kThreads * kPerThread);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        queue_->Post(Insert(absl::StrCat(t, "-", i)), [&](absl::Status s) {
          if (!s.ok()) failures.fetch_add(1);
          done.DecrementCount();
        });
      }
      posted.DecrementCount();
    });
  }
  posted.Wait();
  release.Notify();
  done.Wait();
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Count(*reader_), kThreads * kPerThread);
  WriteQueue::Stats stats = queue_->GetStats();
  EXPECT_EQ(stats.ops, kThreads * kPerThread + 1);
  EXPECT_EQ(stats.commits, 1 + 4);  // the blocker, then ceil(2000 / 512)
  EXPECT_EQ(stats.largest_batch, 512);
}

TEST_F(WriteQueueTest, FailingOpIsRolledBackAlone) {
  queue_->Start();
  absl::Notification release;
  BlockWriter(&release);
  std::vector<absl::Status> results(4);
  absl::BlockingCounter done(4);
  auto record = [&](int i) {
    return [&, i](absl::Status s) {
      results[i] = s;
      done.DecrementCount();
    };
  };
  queue_->Post(Insert("a"), record(0));
  queue_->Post(
      [](Database& db) -> absl::Status {
        PTXB_RETURN_IF_ERROR(Insert("b")(db));
        return absl::AbortedError("changed my mind");
      },
      record(1));
  queue_->Post(Insert("c"), record(2));
  queue_->Post(Insert("a"), record(3));  // UNIQUE violation
  release.Notify();
  done.Wait();
  EXPECT_TRUE(results[0].ok()) << results[0];
  EXPECT_EQ(results[1].code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(results[2].ok()) << results[2];
  EXPECT_EQ(results[3].code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Count(*reader_), 2);
  EXPECT_EQ(Count(*reader_, "v = 'b'"), 0);
  EXPECT_EQ(queue_->GetStats().commits, 2);
  EXPECT_EQ(queue_->GetStats().failed_ops, 2);
  // Every commit is timed, once.
  EXPECT_EQ(queue_->commit_seconds().Read().count, 2u);
}

// A solo op is a transaction of its own between the ops queued around it,
// and one that fails leaves none of its writes.
TEST_F(WriteQueueTest, ASoloOpRunsAloneWholeOrNotAtAll) {
  queue_->Start();
  absl::Notification release;
  BlockWriter(&release);
  std::vector<absl::Status> results(5);
  absl::BlockingCounter done(5);
  auto record = [&](int i) {
    return [&, i](absl::Status s) {
      results[i] = s;
      done.DecrementCount();
    };
  };
  queue_->Post(Insert("a"), record(0));
  queue_->PostSolo(
      [](Database& db) -> absl::Status {
        PTXB_RETURN_IF_ERROR(Insert("s1")(db));
        return Insert("s2")(db);
      },
      record(1));
  queue_->PostSolo(
      [](Database& db) -> absl::Status {
        PTXB_RETURN_IF_ERROR(Insert("f1")(db));
        return Insert("a")(db);  // UNIQUE violation: f1 goes too
      },
      record(2));
  queue_->Post(Insert("b"), record(3));
  queue_->Post(Insert("c"), record(4));
  const int64_t commits_before = queue_->GetStats().commits;
  release.Notify();
  done.Wait();
  EXPECT_TRUE(results[0].ok() && results[1].ok() && results[3].ok() && results[4].ok());
  EXPECT_EQ(results[2].code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Count(*reader_), 5);  // a, s1, s2, b, c
  EXPECT_EQ(Count(*reader_, "v = 'f1'"), 0);
  // The blocker's batch; "a"; each solo op alone; "b" and "c" together.
  EXPECT_EQ(queue_->GetStats().commits - commits_before, 5);
  EXPECT_EQ(queue_->GetStats().largest_batch, 2);
}

TEST_F(WriteQueueTest, DoneRunsOnlyAfterCommit) {
  queue_->Start();
  int64_t seen_inside_op = -1, seen_in_done = -1;
  absl::Notification finished;
  // The reader is used only on the writer thread until `finished`.
  queue_->Post(
      [&](Database& db) -> absl::Status {
        PTXB_RETURN_IF_ERROR(Insert("x")(db));
        seen_inside_op = Count(*reader_);
        return absl::OkStatus();
      },
      [&](absl::Status s) {
        EXPECT_TRUE(s.ok()) << s;
        seen_in_done = Count(*reader_);
        finished.Notify();
      });
  finished.WaitForNotification();
  EXPECT_EQ(seen_inside_op, 0);
  EXPECT_EQ(seen_in_done, 1);
}

TEST_F(WriteQueueTest, HookRunsEveryTickWithoutOps) {
  options_.tick = absl::Milliseconds(2);
  queue_ = std::make_unique<WriteQueue>(OpenDb(temp_.path(), absl::Seconds(10)), options_);
  std::atomic<int> calls{0};
  std::atomic<bool> outside_transaction{false};
  absl::Notification five;
  queue_->SetHook([&](Database& db) {
    if (!db.InTransaction()) outside_transaction = true;
    if (calls.fetch_add(1) + 1 == 5) five.Notify();
  });
  queue_->Start();
  EXPECT_TRUE(five.WaitForNotificationWithTimeout(absl::Seconds(5)));
  queue_->Stop();
  EXPECT_FALSE(outside_transaction.load());
  EXPECT_EQ(queue_->GetStats().ops, 0);
  EXPECT_GE(queue_->GetStats().commits, 5);
}

TEST_F(WriteQueueTest, HookSeesTheBatchOps) {
  int64_t rows_seen_by_hook = -1;
  queue_->SetHook([&](Database& db) { rows_seen_by_hook = Count(db); });
  queue_->Start();
  ASSERT_TRUE(queue_->RunSync(Insert("y")).ok());
  queue_->Stop();
  EXPECT_EQ(rows_seen_by_hook, 1);
}

TEST_F(WriteQueueTest, StopDrainsAndLaterPostsFail) {
  queue_->Start();
  std::atomic<int> ok{0};
  for (int i = 0; i < 1000; ++i) {
    queue_->Post(Insert(std::to_string(i)), [&](absl::Status s) {
      if (s.ok()) ok.fetch_add(1);
    });
  }
  queue_->Stop();
  EXPECT_EQ(ok.load(), 1000);
  EXPECT_EQ(Count(*reader_), 1000);
  bool ran = false;
  absl::Status late;
  queue_->Post(
      [&](Database&) {
        ran = true;
        return absl::OkStatus();
      },
      [&](absl::Status s) { late = s; });
  EXPECT_FALSE(ran);
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue_->RunSync(Insert("z")).code(), absl::StatusCode::kFailedPrecondition);
  queue_->Stop();  // idempotent
}

TEST_F(WriteQueueTest, StopFromTheQueuesThreadsOnlyRequestsIt) {
  for (bool from_done : {false, true}) {
    SCOPED_TRACE(from_done ? "from a Done (reply thread)" : "from an op (writer thread)");
    queue_ = std::make_unique<WriteQueue>(OpenDb(temp_.path(), absl::Seconds(10)), options_);
    queue_->Start();
    absl::Notification stopped_inside;
    auto stop = [&] {
      queue_->Stop();  // must neither deadlock nor join itself
      stopped_inside.Notify();
    };
    queue_->Post(
        [&](Database& db) {
          if (!from_done) stop();
          return Insert(from_done ? "done" : "op")(db);
        },
        [&](absl::Status) {
          if (from_done) stop();
        });
    stopped_inside.WaitForNotification();
    queue_->Stop();
    EXPECT_EQ(queue_->RunSync(Insert("b")).code(), absl::StatusCode::kFailedPrecondition);
  }
  EXPECT_EQ(Count(*reader_), 2);
}

TEST_F(WriteQueueTest, TheWriterGoesOnWhileRepliesGoOutInOrder) {
  queue_->Start();
  absl::Notification in_first_done, release_first_done, second_op_ran;
  std::vector<std::string> replies;  // touched on the reply thread until Stop
  queue_->Post(Insert("a"), [&](absl::Status) {
    in_first_done.Notify();
    release_first_done.WaitForNotification();
    replies.push_back("a");
  });
  in_first_done.WaitForNotification();
  // The reply thread is held in the first Done; the writer is not.
  queue_->Post(
      [&](Database& db) {
        second_op_ran.Notify();
        return Insert("b")(db);
      },
      [&](absl::Status) { replies.push_back("b"); });
  ASSERT_TRUE(second_op_ran.WaitForNotificationWithTimeout(absl::Seconds(10)));
  while (queue_->GetStats().commits < 2) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(Count(*reader_), 2);  // committed before any reply of its batch
  release_first_done.Notify();
  queue_->Stop();  // the second reply went out before Stop returned
  EXPECT_EQ(replies, (std::vector<std::string>{"a", "b"}));
}

TEST_F(WriteQueueTest, RunSyncReturnsOpStatusAndRefusesMisuse) {
  EXPECT_EQ(queue_->RunSync(Insert("early")).code(), absl::StatusCode::kFailedPrecondition);
  queue_->Start();
  EXPECT_TRUE(queue_->RunSync(Insert("a")).ok());
  EXPECT_EQ(queue_->RunSync(Insert("a")).code(), absl::StatusCode::kAlreadyExists);
  absl::Status nested;
  ASSERT_TRUE(queue_->RunSync([&](Database&) {
                       nested = queue_->RunSync(Insert("b"));
                       return absl::OkStatus();
                     })
                  .ok());
  EXPECT_EQ(nested.code(), absl::StatusCode::kFailedPrecondition);
  absl::Notification replied;
  queue_->Post(Insert("c"), [&](absl::Status) {
    nested = queue_->RunSync(Insert("d"));
    replied.Notify();
  });
  replied.WaitForNotification();
  EXPECT_EQ(nested.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Count(*reader_), 2);
}

TEST_F(WriteQueueTest, FailedBeginAborts) {
  // "fast" forks without re-running the test, so the child uses this
  // process's temp file (removed by the fixture) and no thread exists yet.
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_DEATH(
      {
        auto holder = OpenDb(temp_.path(), absl::ZeroDuration());
        Transaction held(holder.get());
        if (!held.Begin().ok()) return;
        WriteQueue queue(OpenDb(temp_.path(), absl::ZeroDuration()), {});
        queue.Start();
        (void)queue.RunSync(Insert("never"));
      },
      "write queue cannot continue");
}

// Options::sync_wal: the disk's sync moves from each COMMIT to the reply
// thread, and no reply goes out before a sync that covers its batch.
class WriteQueueWalSyncTest : public WriteQueueTest {
 protected:
  void SetUp() override {
    options_.sync_wal = true;
    reader_ = OpenDb(temp_.path(), absl::Seconds(10));
    // FULL, as the scheduler opens it: the queue turns it to NORMAL.
    queue_ = std::make_unique<WriteQueue>(OpenDb(temp_.path(), absl::Seconds(10), true), options_);
  }

  // The writer connection's synchronous setting (0 OFF, 1 NORMAL, 2 FULL).
  int64_t Synchronous() {
    int64_t level = -1;
    EXPECT_TRUE(queue_
                    ->RunSync([&level](Database& db) -> absl::Status {
                      PTXB_ASSIGN_OR_RETURN(Statement statement, db.Prepare("PRAGMA synchronous"));
                      PTXB_ASSIGN_OR_RETURN(bool row, statement.Step());
                      if (row) level = statement.ColumnInt64(0);
                      return absl::OkStatus();
                    })
                    .ok());
    return level;
  }
};

TEST_F(WriteQueueWalSyncTest, EveryReplyWaitsForASyncOfTheWal) {
  queue_->Start();
  EXPECT_EQ(Synchronous(), 1);  // NORMAL: the COMMIT no longer syncs
  constexpr int kOps = 300;
  absl::BlockingCounter done(kOps);
  std::atomic<int> unsynced{0};
  for (int i = 0; i < kOps; ++i) {
    queue_->Post(Insert(absl::StrCat("v", i)), [&](absl::Status status) {
      EXPECT_TRUE(status.ok()) << status;
      // The sync that covers this batch is counted before its replies run.
      if (queue_->GetStats().syncs == 0) unsynced.fetch_add(1);
      done.DecrementCount();
    });
    if (i % 50 == 0) absl::SleepFor(absl::Milliseconds(2));  // several batches
  }
  done.Wait();
  EXPECT_EQ(unsynced.load(), 0);
  const WriteQueue::Stats stats = queue_->GetStats();
  EXPECT_GE(stats.syncs, 1);
  EXPECT_LE(stats.syncs, stats.commits);  // one sync may cover several batches
  EXPECT_EQ(queue_->sync_seconds().Read().count, static_cast<uint64_t>(stats.syncs));
  EXPECT_EQ(Count(*reader_), kOps);
}

TEST(WriteQueueWalSyncMemoryTest, AnInMemoryDatabaseIsNeverSynced) {
  auto db = Database::Open(":memory:", {});
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)").ok());
  WriteQueue::Options options;
  options.sync_wal = true;
  WriteQueue queue(*std::move(db), options);
  queue.Start();
  EXPECT_TRUE(queue.RunSync(Insert("a")).ok());
  EXPECT_EQ(queue.GetStats().syncs, 0);
}

}  // namespace
}  // namespace ptxbench::storage
