#ifndef PTXBENCH_STORAGE_MIGRATIONS_H_
#define PTXBENCH_STORAGE_MIGRATIONS_H_

// Schema versioning with PRAGMA application_id (whose file is this?) and
// PRAGMA user_version (which schema does it have?), applied as forward-only
// migrations. The schema owner lists its migrations once, e.g.
//
//   const std::vector<Migration> kMigrations = {
//       {1, "CREATE TABLE experiments(...);"},
//       {2, kBlobTableSql},
//   };
//   PTXB_ASSIGN_OR_RETURN(auto db, OpenAndMigrate(path, {}, 0x50545842, "ptxbench",
//                                                 kMigrations));
//
// Released migrations are never edited; a schema change is a new version.
// Thread safety: as Database (one owner thread). Several processes may
// migrate the same file at once: every step re-checks the version inside its
// BEGIN IMMEDIATE transaction.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/database.h"

namespace ptxbench::storage {

// Brings the schema from version - 1 to `version`. `sql` may hold several
// statements; it runs in the same transaction as the user_version bump.
// `rows`, when set, runs after it in that transaction: what SQL alone cannot
// do once, such as columns filled from the blobs of the rows written before
// them (so readers never convert old rows themselves). Its error fails the
// migration as the SQL's does.
struct Migration {
  int version;
  const char* sql;
  absl::Status (*rows)(Database& db) = nullptr;
};

// Brings `db` to the newest version in `migrations` (ascending, versions > 0,
// else kInvalidArgument). A new, empty database gets `application_id` set and
// every migration applied in order, each in its own BEGIN IMMEDIATE
// transaction together with its user_version bump. Errors:
//   kFailedPrecondition "<path> is not a <product> database (application_id
//     0x...)" when the file carries another application_id, or none but
//     already has tables (someone else's file); nothing is written then;
//   kFailedPrecondition "<path> has schema version N, newer than this build
//     supports (M); upgrade <product>";
//   a failing migration's own error, prefixed with its version; the versions
//     before it stay applied.
// Writes nothing when the schema is already current, so a read-only
// connection may call it to check a file.
absl::Status Migrate(Database& db, uint32_t application_id, absl::string_view product_name,
                     const std::vector<Migration>& migrations);

// Opens `path` as a `product_name` database and migrates it. Unlike Open()
// followed by Migrate(), a file that belongs to someone else is refused before
// anything is written to it (Open switches files to WAL, which rewrites the
// header): also kFailedPrecondition "<path> is not a <product> database (not
// an SQLite file)" for files that are not SQLite at all.
absl::StatusOr<std::unique_ptr<Database>> OpenAndMigrate(
    const std::string& path, const Database::Options& options, uint32_t application_id,
    absl::string_view product_name, const std::vector<Migration>& migrations);

// PRAGMA user_version of `db`.
absl::StatusOr<int64_t> SchemaVersion(Database& db);

}  // namespace ptxbench::storage

#endif  // PTXBENCH_STORAGE_MIGRATIONS_H_
