#ifndef PTXBENCH_STORAGE_SQLITE_ERROR_H_
#define PTXBENCH_STORAGE_SQLITE_ERROR_H_

// Internal to ptxbench::storage: turns SQLite result codes into absl::Status.
//
// Codes are chosen by what the caller should do about them (kUnavailable: retry
// the call; kAborted: retry higher up):
//   SQLITE_BUSY, SQLITE_LOCKED           -> kUnavailable        (retry the call)
//   SQLITE_CONSTRAINT_PRIMARYKEY/UNIQUE  -> kAlreadyExists
//   other SQLITE_CONSTRAINT_*            -> kFailedPrecondition (fix state first)
//   SQLITE_NOTADB, SQLITE_CORRUPT        -> kDataLoss
//   SQLITE_CANTOPEN, SQLITE_READONLY,
//   SQLITE_PERM                          -> kFailedPrecondition
//   SQLITE_FULL, SQLITE_NOMEM            -> kResourceExhausted
//   SQLITE_RANGE, SQLITE_TOOBIG          -> kInvalidArgument
//   SQLITE_INTERRUPT                     -> kCancelled
//   anything else                        -> kInternal
// Messages name the database file (unless in memory), sqlite3_errmsg, the result code and the
// first 80 characters of the SQL.

#include <sqlite3.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ptxbench::storage::internal {

// The absl code for an (extended or primary) SQLite result code.
absl::StatusCode SqliteStatusCode(int rc);

// An error status for `rc`, a failed call on `db` (may be null) while running
// `sql` (may be empty). Uses sqlite3_errmsg(db) when `db` is set, so call it
// right after the failing API call, on the thread that made it.
absl::Status SqliteError(int rc, sqlite3* db, absl::string_view sql);

// `sql` with runs of whitespace folded to one space, cut to 80 characters.
std::string AbbreviateSql(absl::string_view sql);

}  // namespace ptxbench::storage::internal

#endif  // PTXBENCH_STORAGE_SQLITE_ERROR_H_
