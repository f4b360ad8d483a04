#include "storage/migrations.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace ptxbench::storage {
namespace {

// What a file says about itself.
struct FileIdentity {
  uint32_t application_id = 0;
  int64_t user_version = 0;
  int64_t schema_objects = 0;  // tables, indexes, views, triggers
};

absl::StatusOr<int64_t> QueryInt(Database& db, absl::string_view sql) {
  PTXB_ASSIGN_OR_RETURN(Statement statement, db.Prepare(sql));
  PTXB_ASSIGN_OR_RETURN(bool row, statement.Step());
  if (!row) return absl::InternalError(absl::StrCat("no row from \"", sql, "\""));
  return statement.ColumnInt64(0);
}

absl::StatusOr<FileIdentity> ReadIdentity(Database& db) {
  FileIdentity id;
  PTXB_ASSIGN_OR_RETURN(int64_t app, QueryInt(db, "PRAGMA application_id"));
  id.application_id = static_cast<uint32_t>(app);  // SQLite stores it signed
  PTXB_ASSIGN_OR_RETURN(id.user_version, QueryInt(db, "PRAGMA user_version"));
  PTXB_ASSIGN_OR_RETURN(id.schema_objects,
                        QueryInt(db, "SELECT count(*) FROM sqlite_master"));
  return id;
}

absl::Status CheckIdentity(const Database& db, const FileIdentity& id,
                           uint32_t application_id, absl::string_view product,
                           int highest) {
  bool fresh = id.application_id == 0 && id.schema_objects == 0 && id.user_version == 0;
  if (id.application_id != application_id && !fresh) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is not a %s database (application_id 0x%08x)", db.path(), product,
        id.application_id));
  }
  if (id.user_version > highest) {
    return absl::FailedPreconditionError(absl::StrCat(
        db.path(), " has schema version ", id.user_version,
        ", newer than this build supports (", highest, "); upgrade ", product));
  }
  return absl::OkStatus();
}

absl::Status ValidateMigrations(const std::vector<Migration>& migrations) {
  int previous = 0;
  for (const Migration& m : migrations) {
    if (m.version <= previous || m.sql == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "migrations must have ascending versions > 0 and SQL; bad version ", m.version));
    }
    previous = m.version;
  }
  return absl::OkStatus();
}

// One transaction: re-checks the file, stamps a fresh file, applies the next
// pending migration. Sets *done when nothing was left to do.
absl::Status Step(Database& db, uint32_t application_id, absl::string_view product,
                  const std::vector<Migration>& migrations, bool* done) {
  const int highest = migrations.empty() ? 0 : migrations.back().version;
  Transaction txn(&db);
  PTXB_RETURN_IF_ERROR(txn.Begin());
  PTXB_ASSIGN_OR_RETURN(FileIdentity id, ReadIdentity(db));
  PTXB_RETURN_IF_ERROR(CheckIdentity(db, id, application_id, product, highest));
  const Migration* next = nullptr;
  for (const Migration& m : migrations) {
    if (m.version > id.user_version) {
      next = &m;
      break;
    }
  }
  *done = next == nullptr;
  if (id.application_id != application_id) {
    PTXB_RETURN_IF_ERROR(db.Execute(absl::StrCat(
        "PRAGMA application_id = ", static_cast<int32_t>(application_id))));
  }
  if (next != nullptr) {
    absl::Status status = db.Execute(next->sql);
    if (status.ok() && next->rows != nullptr) status = next->rows(db);
    if (status.ok()) {
      status = db.Execute(absl::StrCat("PRAGMA user_version = ", next->version));
    }
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat(db.path(), ": migration to version ",
                                                      next->version, " failed: ",
                                                      status.message()));
    }
  }
  PTXB_RETURN_IF_ERROR(txn.Commit());
  if (next != nullptr) {
    LogInfo("applied schema migration",
            {{"path", db.path()}, {"version", std::to_string(next->version)}});
  }
  return absl::OkStatus();
}

// Validates `migrations` and checks, outside any transaction (so a current or
// foreign file never sees a write lock), that they may be applied to `db`.
absl::StatusOr<FileIdentity> Inspect(Database& db, uint32_t application_id,
                                     absl::string_view product,
                                     const std::vector<Migration>& migrations) {
  PTXB_RETURN_IF_ERROR(ValidateMigrations(migrations));
  const int highest = migrations.empty() ? 0 : migrations.back().version;
  PTXB_ASSIGN_OR_RETURN(FileIdentity id, ReadIdentity(db));
  PTXB_RETURN_IF_ERROR(CheckIdentity(db, id, application_id, product, highest));
  return id;
}

}  // namespace

absl::Status Migrate(Database& db, uint32_t application_id, absl::string_view product_name,
                     const std::vector<Migration>& migrations) {
  PTXB_ASSIGN_OR_RETURN(FileIdentity id, Inspect(db, application_id, product_name, migrations));
  const int highest = migrations.empty() ? 0 : migrations.back().version;
  if (id.application_id == application_id && id.user_version == highest) {
    return absl::OkStatus();
  }
  bool done = false;
  while (!done) {
    PTXB_RETURN_IF_ERROR(Step(db, application_id, product_name, migrations, &done));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Database>> OpenAndMigrate(
    const std::string& path, const Database::Options& options, uint32_t application_id,
    absl::string_view product_name, const std::vector<Migration>& migrations) {
  const bool in_memory = path.empty() || path == ":memory:";
  if (!in_memory) {
    PTXB_ASSIGN_OR_RETURN(bool foreign, IsForeignFile(path));
    if (foreign) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " is not a ", product_name, " database (not an SQLite file)"));
    }
  }
  Database::Options inspect = options;
  inspect.wal = false;
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path, inspect));
  PTXB_RETURN_IF_ERROR(Inspect(*db, application_id, product_name, migrations).status());
  if (options.wal && !options.read_only && !in_memory) {
    PTXB_RETURN_IF_ERROR(db->EnableWal());
  }
  PTXB_RETURN_IF_ERROR(Migrate(*db, application_id, product_name, migrations));
  return db;
}

absl::StatusOr<int64_t> SchemaVersion(Database& db) {
  return QueryInt(db, "PRAGMA user_version");
}

}  // namespace ptxbench::storage
