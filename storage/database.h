#ifndef PTXBENCH_STORAGE_DATABASE_H_
#define PTXBENCH_STORAGE_DATABASE_H_

// RAII wrappers over the SQLite C API, in the manner of Chromium's sql::
// classes but returning absl::Status: a Database owns one connection, a
// Statement one prepared statement, a Transaction one BEGIN IMMEDIATE.
//
// Errors: SQLite result codes map to absl codes by what the caller should do
// (SQLITE_BUSY/LOCKED -> kUnavailable, PRIMARY KEY/UNIQUE violations ->
// kAlreadyExists, other constraints -> kFailedPrecondition, NOTADB/CORRUPT ->
// kDataLoss, the rest mostly kInternal; see sqlite_error.h). Messages name the
// file, carry sqlite3_errmsg and the first 80 characters of the SQL.
//
// Thread safety: none of these classes is thread-safe. A Database and its
// Statements belong to one thread at a time (the connection is opened with
// SQLITE_OPEN_NOMUTEX); handing one to another thread needs a happens-before
// edge (e.g. a mutex or thread start). Use one Database per thread.

#include <sqlite3.h>

#include <concepts>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxbench::storage {

// One prepared statement. Move-only; finalized in the destructor. Must not
// outlive the Database that prepared it.
//
// Binds are typed and 1-based like SQLite; there is no implicit narrowing
// (binding a double or an unsigned 64-bit value as Int64 does not compile).
// A bind error is remembered and returned by the next Step()/Run().
class Statement {
 public:
  Statement() = default;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& BindInt64(int index, int64_t value);
  template <typename T>
    requires std::floating_point<T> || std::same_as<T, bool> ||
             std::same_as<T, uint64_t>
  Statement& BindInt64(int index, T value) = delete;
  Statement& BindDouble(int index, double value);
  Statement& BindText(int index, absl::string_view value);
  // Binds a BLOB; an empty value binds an empty BLOB, not NULL.
  Statement& BindBlob(int index, absl::string_view value);
  Statement& BindNull(int index);
  Statement& BindBool(int index, bool value);  // stored as 0 / 1

  // Advances: true = a row is available through the Column*() accessors,
  // false = the statement has finished. On error the statement is reset.
  absl::StatusOr<bool> Step();
  // Steps until done, ignoring any rows (INSERT/UPDATE/DELETE/DDL).
  absl::Status Run();

  // Column accessors, 0-based, valid only while Step() last returned true.
  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  std::string ColumnBlob(int column) const;
  bool ColumnIsNull(int column) const;
  bool ColumnBool(int column) const;

  // Rewinds to before the first row, clears all bindings and any remembered
  // bind error. Call it (or step to the end) after reading only part of a
  // result: an unfinished statement keeps its read snapshot open.
  void Reset();

  // The SQL text this statement was prepared from.
  absl::string_view sql() const;
  bool is_valid() const { return stmt_ != nullptr; }

 private:
  friend class Database;
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  void NoteBindResult(int rc);

  sqlite3_stmt* stmt_ = nullptr;
  absl::Status bind_status_;
};

// One SQLite connection. Not thread-safe: one owner thread (see above).
class Database {
 public:
  struct Options {
    bool read_only = false;
    absl::Duration busy_timeout = absl::Seconds(10);
    // synchronous=FULL instead of NORMAL: NORMAL in WAL mode may lose the last
    // commits on power loss but never corrupts the file.
    bool synchronous_full = false;
    // Switch the file to WAL when it is opened read-write. OpenAndMigrate
    // (migrations.h) turns it off to inspect a file before changing it.
    bool wal = true;
  };

  // Opens or creates `path` (":memory:" allowed). Sets journal_mode=WAL (not
  // for ":memory:" or read-only connections), busy_timeout, foreign_keys=ON,
  // synchronous=NORMAL (FULL if asked). A non-empty file that does not start
  // with the SQLite header is refused with kFailedPrecondition without being
  // opened, so it is never modified. Errors name the path.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& path,
                                                        const Options& options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more ';'-separated statements; any rows are discarded.
  absl::Status Execute(absl::string_view sql);
  // Prepared once per distinct SQL text and owned by this Database; each call
  // returns it reset with bindings cleared. Valid until the Database dies.
  // Do not use the same SQL text in two places at once.
  absl::StatusOr<Statement*> Cached(absl::string_view sql);
  // A fresh, uncached statement (for one-off SQL).
  absl::StatusOr<Statement> Prepare(absl::string_view sql);

  // Switches the file to WAL journal mode; kFailedPrecondition if SQLite
  // keeps another mode (e.g. ":memory:").
  absl::Status EnableWal();

  int64_t LastInsertRowId() const;
  // Rows changed by the most recent INSERT/UPDATE/DELETE.
  int64_t Changes() const;
  // True while a transaction is open on this connection.
  bool InTransaction() const;
  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  absl::Status Configure(const Options& options);

  sqlite3* db_;
  std::string path_;
  absl::flat_hash_map<std::string, std::unique_ptr<Statement>> cache_;
};

// One write transaction: BEGIN IMMEDIATE takes the write lock up front, so a
// busy database fails at Begin() (after busy_timeout) rather than midway.
// Rolls back in its destructor unless committed. Not thread-safe; must not
// outlive its Database. Transactions do not nest (use SAVEPOINT inside one).
class Transaction {
 public:
  explicit Transaction(Database* db) : db_(db) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  absl::Status Begin();
  absl::Status Commit();
  // Rolling back a transaction that SQLite already rolled back is OK.
  absl::Status Rollback();

 private:
  Database* db_;
  bool open_ = false;
};

// True when `path` names an existing, non-empty regular file that does not
// start with the 16-byte SQLite header. Reads at most 16 bytes.
absl::StatusOr<bool> IsForeignFile(const std::string& path);

}  // namespace ptxbench::storage

#endif  // PTXBENCH_STORAGE_DATABASE_H_
