#include "storage/write_queue.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/log.h"

namespace ptxbench::storage {
namespace {

// The process cannot go on: see the header for why this aborts.
[[noreturn]] void Fatal(const Database& db, absl::string_view step, const absl::Status& status) {
  LogError("write queue cannot continue; aborting so the process restarts from the database",
           {{"path", db.path()}, {"step", std::string(step)}, {"error", status.ToString()}});
  std::abort();
}

void Must(Database& db, absl::string_view sql) {
  absl::StatusOr<Statement*> statement = db.Cached(sql);
  absl::Status status = statement.ok() ? (*statement)->Run() : statement.status();
  if (!status.ok()) Fatal(db, sql, status);
}

}  // namespace

WriteQueue::WriteQueue(std::unique_ptr<Database> db, Options options)
    : db_(std::move(db)), options_(options) {}

WriteQueue::~WriteQueue() { Stop(); }

void WriteQueue::SetHook(Hook hook) { hook_ = std::move(hook); }

void WriteQueue::PrepareWalSync() {
  // An in-memory database has nothing to make durable.
  if (!options_.sync_wal || db_->path().empty() || db_->path() == ":memory:") return;
  absl::StatusOr<Statement*> mode = db_->Cached("PRAGMA journal_mode");
  absl::StatusOr<bool> row = mode.ok() ? (*mode)->Step() : mode.status();
  const bool wal = row.ok() && *row && (*mode)->ColumnText(0) == "wal";
  if (mode.ok()) (*mode)->Reset();
  if (!wal) {
    LogWarning("not syncing the WAL on the reply thread: the database is not in WAL mode",
               {{"path", db_->path()}});
    return;
  }
  Must(*db_, "PRAGMA synchronous = NORMAL");
  wal_sync_ = std::make_unique<WalSync>(db_->path());
}

void WriteQueue::Start() {
  absl::MutexLock lock(&mu_);
  if (started_ || stopped_) return;
  PrepareWalSync();
  started_ = true;
  thread_ = std::thread(&WriteQueue::Loop, this);
  writer_id_ = thread_.get_id();
  reply_thread_ = std::thread(&WriteQueue::ReplyLoop, this);
  reply_id_ = reply_thread_.get_id();
}

void WriteQueue::Post(Op op, Done done) { Enqueue(Pending{std::move(op), std::move(done)}); }

void WriteQueue::PostSolo(Op op, Done done) {
  Enqueue(Pending{std::move(op), std::move(done), /*solo=*/true});
}

void WriteQueue::Enqueue(Pending pending) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopped_) {
      queue_.push_back(std::move(pending));
      return;
    }
  }
  if (pending.done) pending.done(absl::FailedPreconditionError("WriteQueue is stopped"));
}

absl::Status WriteQueue::RunSync(Op op) {
  {
    absl::MutexLock lock(&mu_);
    if (!started_) return absl::FailedPreconditionError("WriteQueue::RunSync before Start");
    if (OnQueueThreadLocked()) {
      return absl::FailedPreconditionError(
          "WriteQueue::RunSync on the writer or reply thread would deadlock; use Post");
    }
  }
  absl::Notification finished;
  absl::Status result;
  Post(std::move(op), [&](absl::Status status) {
    result = std::move(status);
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

void WriteQueue::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    // Neither thread can join itself: it only asks, the owner's Stop() joins.
    if (OnQueueThreadLocked()) return;
  }
  absl::MutexLock stop_lock(&stop_mu_);  // one joiner; concurrent callers wait
  bool started;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    started = started_;
  }
  if (started) {
    thread_.join();  // the writer ran every batch and queued its replies,
    {
      absl::MutexLock lock(&mu_);
      writer_exited_ = true;
    }
    reply_thread_.join();  // which went out before the reply thread exited
  }
  std::deque<Pending> orphans;  // posted while the writer was exiting, or never started
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    orphans.swap(queue_);
  }
  for (Pending& p : orphans) {
    if (p.done) p.done(absl::FailedPreconditionError("WriteQueue is stopped"));
  }
}

WriteQueue::Stats WriteQueue::GetStats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool WriteQueue::OnWriterThread() const {
  absl::MutexLock lock(&mu_);
  return OnWriterThreadLocked();
}

bool WriteQueue::OnWriterThreadLocked() const {
  return started_ && std::this_thread::get_id() == writer_id_;
}

bool WriteQueue::OnQueueThreadLocked() const {
  return started_ && (std::this_thread::get_id() == writer_id_ ||
                      std::this_thread::get_id() == reply_id_);
}

bool WriteQueue::HasWorkOrStopping() const { return !queue_.empty() || stopping_; }

bool WriteQueue::HasRepliesOrWriterExited() const {
  return !replies_.empty() || writer_exited_;
}

void WriteQueue::ReplyLoop() {
  while (true) {
    std::deque<Replies> batches;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &WriteQueue::HasRepliesOrWriterExited));
      if (replies_.empty()) return;  // the writer exited and every reply went out
      batches.swap(replies_);
    }
    Reply(batches);
  }
}

void WriteQueue::Reply(std::deque<Replies>& batches) {
  if (wal_sync_) {
    // Every batch taken here committed before this sync began, so one sync
    // makes them all durable before any of their replies.
    const absl::Time start = absl::Now();
    if (absl::Status synced = wal_sync_->Sync(); !synced.ok()) Fatal(*db_, "WAL sync", synced);
    const absl::Duration spent = absl::Now() - start;
    sync_seconds_.ObserveDuration(spent);
    absl::MutexLock lock(&mu_);
    stats_.syncs += 1;  // counted before the replies it covers
    stats_.in_sync += spent;
  }
  const absl::Time start = absl::Now();
  for (Replies& batch : batches) {
    for (size_t i = 0; i < batch.done.size(); ++i) {
      if (batch.done[i]) batch.done[i](std::move(batch.results[i]));
    }
  }
  const absl::Duration spent = absl::Now() - start;
  absl::MutexLock lock(&mu_);
  stats_.in_done += spent;
}

void WriteQueue::Loop() {
  const size_t max_batch = static_cast<size_t>(std::max(1, options_.max_batch));
  absl::Time next_hook = absl::Now() + options_.tick;
  while (true) {
    std::deque<Pending> batch;
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithDeadline(absl::Condition(this, &WriteQueue::HasWorkOrStopping),
                            hook_ ? next_hook : absl::InfiniteFuture());
      // A solo op is a batch of its own; the ops before it form the one before.
      size_t n = 0;
      while (n < std::min(queue_.size(), max_batch) && !queue_[n].solo) ++n;
      if (n == 0 && !queue_.empty()) n = 1;
      auto end = queue_.begin() + static_cast<std::ptrdiff_t>(n);
      std::move(queue_.begin(), end, std::back_inserter(batch));
      queue_.erase(queue_.begin(), end);
      if (batch.empty() && stopping_) return;
    }
    if (batch.empty() && (!hook_ || absl::Now() < next_hook)) continue;
    RunBatch(batch);
    next_hook = absl::Now() + options_.tick;
  }
}

absl::Status WriteQueue::RunOp(const Op& op) {
  Database& db = *db_;
  Must(db, "SAVEPOINT write_queue_op");
  absl::Status status = op(db);
  if (!db.InTransaction()) {
    // SQLite rolled back the whole batch (e.g. SQLITE_FULL): earlier ops are lost.
    Fatal(db, "op", absl::InternalError(absl::StrCat(
                        "the batch transaction ended inside an op; op status: ",
                        status.ToString())));
  }
  if (!status.ok()) Must(db, "ROLLBACK TO write_queue_op");
  Must(db, "RELEASE write_queue_op");
  return status;
}

absl::Status WriteQueue::RunSoloOp(const Op& op) {
  Database& db = *db_;
  absl::Status status = op(db);
  if (!db.InTransaction()) {
    Fatal(db, "solo op", absl::InternalError(absl::StrCat(
                             "the transaction ended inside a solo op; op status: ",
                             status.ToString())));
  }
  if (!status.ok()) {
    Must(db, "ROLLBACK");
    Must(db, "BEGIN IMMEDIATE");  // for the hook
  }
  return status;
}

void WriteQueue::RunBatch(std::deque<Pending>& batch) {
  Database& db = *db_;
  const absl::Time start = absl::Now();
  Must(db, "BEGIN IMMEDIATE");
  std::vector<absl::Status> results;
  results.reserve(batch.size());
  int64_t failed = 0;
  for (const Pending& p : batch) {
    results.push_back(p.solo ? RunSoloOp(p.op) : RunOp(p.op));
    if (!results.back().ok()) ++failed;
  }
  if (hook_) {
    hook_(db);
    if (!db.InTransaction()) {
      Fatal(db, "hook", absl::InternalError("the batch transaction ended inside the hook"));
    }
  }
  const absl::Time commit_start = absl::Now();
  Must(db, "COMMIT");
  const absl::Time committed = absl::Now();
  commit_seconds_.ObserveDuration(committed - commit_start);
  Replies replies;
  replies.done.reserve(batch.size());
  for (Pending& p : batch) replies.done.push_back(std::move(p.done));
  replies.results = std::move(results);
  absl::MutexLock lock(&mu_);
  stats_.commits += 1;
  stats_.ops += static_cast<int64_t>(batch.size());
  stats_.failed_ops += failed;
  stats_.largest_batch = std::max(stats_.largest_batch, static_cast<int64_t>(batch.size()));
  stats_.in_ops += commit_start - start;
  stats_.in_commit += committed - commit_start;
  replies_.push_back(std::move(replies));
}

}  // namespace ptxbench::storage
