#include "storage/database.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "storage/sqlite_error.h"

namespace ptxbench::storage {
namespace {

using internal::SqliteError;

bool IsInMemory(const std::string& path) { return path.empty() || path == ":memory:"; }

// `status` with "<context>: " in front of its message, code kept.
absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

}  // namespace

absl::StatusOr<bool> IsForeignFile(const std::string& path) {
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::is_regular_file(st)) return false;  // SQLite decides
  auto size = std::filesystem::file_size(path, ec);
  if (ec || size == 0) return false;  // an empty file is a new database
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;  // unreadable: let SQLite report it
  static constexpr char kMagic[16] = "SQLite format 3";  // includes the '\0'
  char header[16] = {};
  size_t got = std::fread(header, 1, sizeof(header), file);
  std::fclose(file);
  return got < sizeof(header) || std::memcmp(header, kMagic, sizeof(header)) != 0;
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& path,
                                                         const Options& options) {
  // SQLite's allocation statistics (sqlite3_memory_used, unused here) take a
  // process-wide mutex around every malloc and free, shared by every
  // connection's thread. Settable only before SQLite initializes, which its
  // first open does; where something else initialized it first, this is a
  // no-op (SQLITE_MISUSE), never an error.
  static absl::once_flag no_memstatus;
  absl::call_once(no_memstatus, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  if (!IsInMemory(path)) {
    PTXB_ASSIGN_OR_RETURN(bool foreign, IsForeignFile(path));
    if (foreign) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " is not an SQLite database file"));
    }
  }
  int flags = SQLITE_OPEN_NOMUTEX;
  flags |= options.read_only ? SQLITE_OPEN_READONLY
                             : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status = SqliteError(rc, raw, "");
    sqlite3_close_v2(raw);
    return Annotate(status, absl::StrCat("open ", path));
  }
  std::unique_ptr<Database> db(new Database(raw, path));
  PTXB_RETURN_IF_ERROR(Annotate(db->Configure(options), absl::StrCat("open ", path)));
  return db;
}

absl::Status Database::Configure(const Options& options) {
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, static_cast<int>(absl::ToInt64Milliseconds(options.busy_timeout)));
  PTXB_RETURN_IF_ERROR(Execute("PRAGMA foreign_keys=ON"));
  PTXB_RETURN_IF_ERROR(Execute(options.synchronous_full ? "PRAGMA synchronous=FULL"
                                                        : "PRAGMA synchronous=NORMAL"));
  // Reads the header and schema now, so a damaged file fails at Open.
  PTXB_RETURN_IF_ERROR(Execute("SELECT count(*) FROM sqlite_master"));
  if (options.wal && !options.read_only && !IsInMemory(path_)) {
    PTXB_RETURN_IF_ERROR(EnableWal());
  }
  return absl::OkStatus();
}

Database::~Database() {
  cache_.clear();  // finalize cached statements before the connection closes
  // close_v2 defers the close while the caller still holds Statements.
  int rc = sqlite3_close_v2(db_);
  if (rc != SQLITE_OK) {
    LogError("closing database failed", {{"path", path_}, {"rc", std::to_string(rc)}});
  }
}

absl::Status Database::Execute(absl::string_view sql) {
  std::string text(sql);  // sqlite3_exec needs NUL termination
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(rc, db_, sql);
  return absl::OkStatus();
}

absl::StatusOr<Statement> Database::Prepare(absl::string_view sql) {
  if (sql.empty()) return absl::InvalidArgumentError("empty SQL");
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, &tail);
  if (rc != SQLITE_OK) return SqliteError(rc, db_, sql);
  Statement statement(stmt);
  if (stmt == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("no SQL statement in \"", internal::AbbreviateSql(sql), "\""));
  }
  absl::string_view rest(tail, static_cast<size_t>(sql.data() + sql.size() - tail));
  if (!absl::StripAsciiWhitespace(rest).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "more than one SQL statement in \"", internal::AbbreviateSql(sql),
        "\"; use Execute() for scripts"));
  }
  return statement;
}

absl::StatusOr<Statement*> Database::Cached(absl::string_view sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) {
    it->second->Reset();
    return it->second.get();
  }
  PTXB_ASSIGN_OR_RETURN(Statement statement, Prepare(sql));
  auto owned = std::make_unique<Statement>(std::move(statement));
  Statement* result = owned.get();
  cache_.emplace(std::string(sql), std::move(owned));
  return result;
}

absl::Status Database::EnableWal() {
  PTXB_ASSIGN_OR_RETURN(Statement pragma, Prepare("PRAGMA journal_mode=WAL"));
  PTXB_ASSIGN_OR_RETURN(bool row, pragma.Step());
  std::string mode = row ? absl::AsciiStrToLower(pragma.ColumnText(0)) : "";
  if (mode != "wal") {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": could not enable WAL (journal_mode is '", mode, "')"));
  }
  return absl::OkStatus();
}

int64_t Database::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int64_t Database::Changes() const { return sqlite3_changes64(db_); }

bool Database::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

Transaction::~Transaction() {
  if (!open_) return;
  absl::Status status = Rollback();
  if (!status.ok()) {
    LogError("transaction rollback failed", {{"error", status.ToString()}});
  }
}

absl::Status Transaction::Begin() {
  if (open_) return absl::FailedPreconditionError("transaction already begun");
  PTXB_ASSIGN_OR_RETURN(Statement * begin, db_->Cached("BEGIN IMMEDIATE"));
  PTXB_RETURN_IF_ERROR(begin->Run());
  open_ = true;
  return absl::OkStatus();
}

absl::Status Transaction::Commit() {
  if (!open_) return absl::FailedPreconditionError("commit without an open transaction");
  PTXB_ASSIGN_OR_RETURN(Statement * commit, db_->Cached("COMMIT"));
  absl::Status status = commit->Run();
  // A failed COMMIT (e.g. SQLITE_BUSY) may leave the transaction open; the
  // destructor or an explicit Rollback() then ends it.
  if (status.ok() || !db_->InTransaction()) open_ = false;
  return status;
}

absl::Status Transaction::Rollback() {
  if (!open_) return absl::FailedPreconditionError("rollback without an open transaction");
  open_ = false;
  if (!db_->InTransaction()) return absl::OkStatus();  // SQLite already did it
  PTXB_ASSIGN_OR_RETURN(Statement * rollback, db_->Cached("ROLLBACK"));
  return rollback->Run();
}

}  // namespace ptxbench::storage
