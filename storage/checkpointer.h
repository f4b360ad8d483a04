#ifndef PTXBENCH_STORAGE_CHECKPOINTER_H_
#define PTXBENCH_STORAGE_CHECKPOINTER_H_

// Copies WAL pages back into the database file from a thread and connection
// of its own, so the writer thread never stalls on a checkpoint (which, run
// by SQLite's auto-checkpoint inside a commit, puts a pause of tens to
// hundreds of milliseconds into the latency of every op in that batch).
// PASSIVE checkpoints never block the writer or readers; the writer restarts
// the WAL from its beginning once a checkpoint has caught up.
//
// Thread safety: Start/Stop from the owning thread only.

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "storage/database.h"

namespace ptxbench::storage {

class Checkpointer {
 public:
  // `path` must be a WAL-mode database file (not ":memory:").
  Checkpointer(std::string path, absl::Duration interval);
  ~Checkpointer();  // Stop()

  absl::Status Start();
  void Stop();
  // Checkpoints run so far (for tests and metrics).
  int64_t runs() const;

 private:
  void Loop();

  const std::string path_;
  const absl::Duration interval_;
  std::unique_ptr<Database> db_;  // used by the thread only
  std::thread thread_;
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t runs_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ptxbench::storage

#endif  // PTXBENCH_STORAGE_CHECKPOINTER_H_
