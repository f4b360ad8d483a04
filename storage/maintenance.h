#ifndef PTXBENCH_STORAGE_MAINTENANCE_H_
#define PTXBENCH_STORAGE_MAINTENANCE_H_

// Keeping a database file sound: the integrity check the scheduler runs at
// start, and an online backup that a running scheduler does not notice.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "storage/database.h"

namespace ptxbench::storage {

// SQLite's `PRAGMA quick_check` (every page and index entry readable and
// well-formed; it skips the cross-check of index contents against rows that
// integrity_check adds, which is what makes it fast enough to run at every
// start). DATA_LOSS naming the file and SQLite's first findings otherwise.
absl::Status CheckIntegrity(Database& db);

struct BackupResult {
  int64_t pages = 0;
  int64_t bytes = 0;
};

// Copies `source` into `path` with SQLite's backup API, in one step: the copy
// is one read transaction, so it is a consistent snapshot even while other
// connections (a running scheduler) write, and in WAL mode it does not hold
// them up. Written beside `path` with mode 0600 (the database holds every
// prompt and answer), checked, synced and renamed into place: `path` is
// either the old file or a whole backup. kInvalidArgument when `path` is the
// source file itself.
absl::StatusOr<BackupResult> BackupTo(Database& source, const std::string& path);

}  // namespace ptxbench::storage

#endif  // PTXBENCH_STORAGE_MAINTENANCE_H_
