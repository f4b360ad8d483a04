#ifndef PTXBENCH_STORAGE_WRITE_QUEUE_H_
#define PTXBENCH_STORAGE_WRITE_QUEUE_H_

// The single writer thread of a process: it owns the write connection and
// commits many small state transitions together, one fsync for hundreds of
// them (the main throughput lever; docs/ARCHITECTURE.md, "Storage").
//
// Each round the writer takes up to `max_batch` queued ops, then
//   BEGIN IMMEDIATE
//   for each op: SAVEPOINT; op(db); RELEASE, or ROLLBACK TO when the op
//                returned an error (only that op's writes are undone)
//   hook(db)     (also in rounds without ops, at least every `tick`)
//   COMMIT
//   done(status) for each op, in order: OK, or the op's own error.
// A Done therefore never runs before the op's writes are durable and visible
// to other connections.
//
// If BEGIN, SAVEPOINT handling or COMMIT fails, or SQLite abandons the
// transaction on its own (e.g. SQLITE_FULL, I/O error), the process logs and
// calls std::abort(): the owner already changed its in-memory state when it
// posted the ops, so memory is ahead of disk and no Done can tell the truth.
// Restarting recovers from the database, which holds exactly the batches that
// committed.
//
// Thread safety: Post, RunSync, Stop and GetStats may be called from any
// thread. Op, Done and Hook run on the writer thread, one at a time; they may
// Post more ops (which run in a later batch); RunSync from there fails and
// Stop from there only requests the stop (the owner's Stop() joins).

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/prometheus.h"
#include "storage/database.h"

namespace ptxbench::storage {

class WriteQueue {
 public:
  // Runs on the writer thread inside the batch transaction. Returning an
  // error rolls back this op's writes only.
  using Op = std::function<absl::Status(Database&)>;
  // Runs on the writer thread after the batch committed. May be empty.
  using Done = std::function<void(absl::Status)>;
  // Runs on the writer thread inside each batch transaction, after the ops.
  using Hook = std::function<void(Database&)>;

  struct Options {
    int max_batch = 512;
    absl::Duration tick = absl::Milliseconds(50);
  };

  // Counters since construction, for tests and metrics.
  struct Stats {
    int64_t commits = 0;       // batch transactions committed (hook-only ones too)
    int64_t ops = 0;           // ops run
    int64_t failed_ops = 0;    // ops that returned an error and were rolled back
    int64_t largest_batch = 0;
  };

  // Takes the write connection (non-null).
  WriteQueue(std::unique_ptr<Database> db, Options options);
  ~WriteQueue();  // Stop()
  WriteQueue(const WriteQueue&) = delete;
  WriteQueue& operator=(const WriteQueue&) = delete;

  // Sets the hook; call before Start.
  void SetHook(Hook hook);
  // Starts the writer thread; ops posted before run in its first batch.
  void Start();
  // Queues `op`; never blocks on I/O. After Stop, `done` (if any) is called
  // at once on the calling thread with kFailedPrecondition and `op` never runs.
  void Post(Op op, Done done);
  // Post, then wait for the op's Done status. kFailedPrecondition when called
  // from the writer thread (it would deadlock) or before Start.
  absl::Status RunSync(Op op);
  // Runs everything queued so far (further batches as needed), then joins the
  // writer thread. Idempotent. Ops queued without Start are failed like Post
  // after Stop.
  void Stop();

  Stats GetStats() const;
  // How long each batch's COMMIT took (its fsync): the durability cost every
  // reply waits for. Thread-safe to read.
  const prometheus::Histogram& commit_seconds() const { return commit_seconds_; }

  // Whether the caller runs on the writer thread (false before Start). Lets
  // an object that must live on that thread check it.
  bool OnWriterThread() const;

 private:
  struct Pending {
    Op op;
    Done done;
  };

  void Loop();
  // Runs one batch transaction: ops, hook, commit, then the Done callbacks.
  void RunBatch(std::deque<Pending>& batch);
  absl::Status RunOp(const Op& op);
  bool HasWorkOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool OnWriterThreadLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Touched only by the writer thread once Start() has run.
  std::unique_ptr<Database> db_;
  const Options options_;
  Hook hook_;  // set before Start(), then read-only

  absl::Mutex stop_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // serializes Stop() calls
  mutable absl::Mutex mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  prometheus::Histogram commit_seconds_{prometheus::DurationBuckets(1e-4, 10)};
  std::thread thread_;  // assigned in Start() under mu_, joined in Stop()
  std::thread::id writer_id_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench::storage

#endif  // PTXBENCH_STORAGE_WRITE_QUEUE_H_
