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
// A solo op (PostSolo) runs alone in its batch, with no SAVEPOINT: BEGIN
// IMMEDIATE; op(db); ROLLBACK and BEGIN IMMEDIATE again when it failed; hook;
// COMMIT. Inside a savepoint SQLite keeps every page the op changed in an
// in-memory sub-journal, and each statement's end walks that whole list
// (memjournal's truncate), so an op of n statements costs O(n^2): a submit
// of 100,000 trajectories took 33 s with 100,000 in the database and 131 s
// with 300,000 (docs/DECISIONS.md, "Big writes"). Without the savepoint
// each statement's end frees only its own records. An op that writes many
// rows is posted solo, in parts that each hold the writer briefly.
//
// and hands the batch's Done callbacks to the reply thread, which calls
// done(status) for each op, batch after batch, in order: OK, or the op's own
// error. A Done therefore never runs before the op's writes are durable and
// visible to other connections, and the writer starts its next batch while
// the replies of the last one go out (finishing an RPC writes to a socket:
// on the writer it took a quarter of its time; bench/scheduler_bench).
//
// With Options::sync_wal (a WAL-mode file), the connection runs
// synchronous=NORMAL: a COMMIT writes the WAL without waiting for the disk,
// and the reply thread syncs the WAL (storage::WalSync) before the Done
// callbacks of every batch committed so far, once for all of them. A Done is
// as durable as with synchronous=FULL, and the writer runs its next batch
// while the disk syncs the last; other connections may read a batch up to one
// sync before it is durable (docs/DECISIONS.md, "Lease latency: the disk off
// the writer's path").
//
// If BEGIN, SAVEPOINT handling or COMMIT fails, or SQLite abandons the
// transaction on its own (e.g. SQLITE_FULL, I/O error), or the WAL's sync
// fails, the process logs and calls std::abort(): the owner already changed
// its in-memory state when it posted the ops, so memory is ahead of disk and
// no Done can tell the truth.
// Restarting recovers from the database, which holds exactly the batches that
// committed.
//
// Thread safety: Post, RunSync, Stop and GetStats may be called from any
// thread. Op and Hook run on the writer thread, one at a time, Done on the
// reply thread, one at a time; all three may Post more ops (which run in a
// later batch); RunSync from either thread fails and Stop from either only
// requests the stop (the owner's Stop() joins).

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
#include "storage/wal_sync.h"

namespace ptxbench::storage {

class WriteQueue {
 public:
  // Runs on the writer thread inside the batch transaction. Returning an
  // error rolls back this op's writes only.
  using Op = std::function<absl::Status(Database&)>;
  // Runs on the reply thread after the batch committed. May be empty.
  using Done = std::function<void(absl::Status)>;
  // Runs on the writer thread inside each batch transaction, after the ops.
  using Hook = std::function<void(Database&)>;

  struct Options {
    int max_batch = 512;
    absl::Duration tick = absl::Milliseconds(50);
    // Sync the WAL on the reply thread instead of in each COMMIT (above).
    // Ignored for an in-memory database, and with a warning for a file that
    // is not in WAL mode.
    bool sync_wal = false;
  };

  // Counters since construction, for tests and metrics.
  struct Stats {
    int64_t commits = 0;       // batch transactions committed (hook-only ones too)
    int64_t ops = 0;           // ops run
    int64_t failed_ops = 0;    // ops that returned an error and were rolled back
    int64_t largest_batch = 0;
    int64_t syncs = 0;         // syncs of the WAL by the reply thread
    // Where the two threads' time went: the writer's running ops (and the
    // hook) and committing, against wall time how busy the one writer is, the
    // figure that bounds every reply's latency; the reply thread's syncing
    // the WAL and in Done callbacks.
    absl::Duration in_ops;
    absl::Duration in_commit;
    absl::Duration in_sync;
    absl::Duration in_done;
  };

  // Takes the write connection (non-null).
  WriteQueue(std::unique_ptr<Database> db, Options options);
  ~WriteQueue();  // Stop()
  WriteQueue(const WriteQueue&) = delete;
  WriteQueue& operator=(const WriteQueue&) = delete;

  // Sets the hook; call before Start.
  void SetHook(Hook hook);
  // Starts the writer and reply threads; ops posted before run in the first
  // batch.
  void Start();
  // Queues `op`; never blocks on I/O. After Stop, `done` (if any) is called
  // at once on the calling thread with kFailedPrecondition and `op` never runs.
  void Post(Op op, Done done);
  // Post, as a solo op (above): it runs in a transaction of its own, whole
  // or not at all, after the ops queued before it.
  void PostSolo(Op op, Done done);
  // Post, then wait for the op's Done status. kFailedPrecondition when called
  // from the writer thread (it would deadlock) or before Start.
  absl::Status RunSync(Op op);
  // Runs everything queued so far (further batches as needed) and its Done
  // callbacks, then joins both threads. Idempotent. Ops queued without Start are failed like Post
  // after Stop.
  void Stop();

  Stats GetStats() const;
  // How long each batch's COMMIT took (with Options::sync_wal its write of
  // the WAL; otherwise its fsync too). Thread-safe to read.
  const prometheus::Histogram& commit_seconds() const { return commit_seconds_; }
  // How long each sync of the WAL took (Options::sync_wal), for all the
  // batches it made durable. Thread-safe to read.
  const prometheus::Histogram& sync_seconds() const { return sync_seconds_; }

  // Whether the caller runs on the writer thread (false before Start). Lets
  // an object that must live on that thread check it.
  bool OnWriterThread() const;

 private:
  struct Pending {
    Op op;
    Done done;
    bool solo = false;
  };
  // A committed batch's callbacks and their ops' results.
  struct Replies {
    std::vector<Done> done;
    std::vector<absl::Status> results;
  };

  void Enqueue(Pending pending);
  void Loop();
  void ReplyLoop();
  // Runs one batch transaction: ops, hook, commit; then queues the Done
  // callbacks for the reply thread.
  void RunBatch(std::deque<Pending>& batch);
  bool HasRepliesOrWriterExited() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RunOp(const Op& op);
  absl::Status RunSoloOp(const Op& op);
  bool HasWorkOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool OnWriterThreadLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool OnQueueThreadLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Switches the connection to synchronous=NORMAL and makes wal_sync_ when
  // Options::sync_wal asks and the file is in WAL mode; before the threads.
  void PrepareWalSync();
  // Runs every batch's Done callbacks, in order, after syncing the WAL.
  void Reply(std::deque<Replies>& batches);

  // Touched only by the writer thread once Start() has run.
  std::unique_ptr<Database> db_;
  const Options options_;
  Hook hook_;  // set before Start(), then read-only
  std::unique_ptr<WalSync> wal_sync_;  // made in Start(), then the reply thread's

  absl::Mutex stop_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // serializes Stop() calls
  mutable absl::Mutex mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  prometheus::Histogram commit_seconds_{prometheus::DurationBuckets(1e-4, 10)};
  prometheus::Histogram sync_seconds_{prometheus::DurationBuckets(1e-4, 10)};
  std::deque<Replies> replies_ ABSL_GUARDED_BY(mu_);
  bool writer_exited_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // assigned in Start() under mu_, joined in Stop()
  std::thread reply_thread_;  // the same
  std::thread::id writer_id_ ABSL_GUARDED_BY(mu_);
  std::thread::id reply_id_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench::storage

#endif  // PTXBENCH_STORAGE_WRITE_QUEUE_H_
