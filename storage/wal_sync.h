#ifndef PTXBENCH_STORAGE_WAL_SYNC_H_
#define PTXBENCH_STORAGE_WAL_SYNC_H_

// Makes a WAL-mode database's committed transactions durable from outside
// SQLite: fdatasync of its "-wal" file. With synchronous=NORMAL a COMMIT
// writes its frames to the WAL without syncing them (SQLite still syncs the
// WAL before every checkpoint and the database after it, so the file is never
// corrupted); one Sync() after a COMMIT returned makes that commit, and every
// earlier one, as durable as synchronous=FULL would have. The write queue
// runs it on its reply thread, so the writer need not wait for the disk
// (storage/write_queue.h).
//
// The WAL keeps its inode while a connection holds the database open (a
// checkpoint restarts or truncates it in place); Sync() still compares the
// path's inode with the one it opened and reopens, syncing the directory,
// if the file was replaced.
//
// Thread safety: one thread at a time.

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"

namespace ptxbench::storage {

class WalSync {
 public:
  // `database_path`: the database file; its WAL is `database_path + "-wal"`.
  explicit WalSync(std::string database_path);
  ~WalSync();
  WalSync(const WalSync&) = delete;
  WalSync& operator=(const WalSync&) = delete;

  // Everything written to the WAL before the call is on disk when it returns
  // OK. An error names the file; the caller cannot know what is durable.
  absl::Status Sync();

 private:
  // (Re)opens the WAL and syncs its directory, so the file's name is durable.
  absl::Status Open();

  const std::string wal_path_;
  int fd_ = -1;
  // The file fd_ is open on, to notice a WAL replaced under its name.
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace ptxbench::storage

#endif  // PTXBENCH_STORAGE_WAL_SYNC_H_
