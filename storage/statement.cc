#include <utility>

#include "storage/database.h"
#include "storage/sqlite_error.h"

namespace ptxbench::storage {

using internal::SqliteError;

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)),
      bind_status_(std::move(other.bind_status_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_status_ = std::move(other.bind_status_);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::NoteBindResult(int rc) {
  // Only the first failure is kept: later ones are usually its consequence.
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = SqliteError(rc, sqlite3_db_handle(stmt_), sql());
  }
}

Statement& Statement::BindInt64(int index, int64_t value) {
  NoteBindResult(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::BindDouble(int index, double value) {
  NoteBindResult(sqlite3_bind_double(stmt_, index, value));
  return *this;
}

Statement& Statement::BindText(int index, absl::string_view value) {
  // A null data pointer would bind NULL; "" keeps it an empty string.
  const char* data = value.data() != nullptr ? value.data() : "";
  NoteBindResult(sqlite3_bind_text64(stmt_, index, data, value.size(),
                                     SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::BindBlob(int index, absl::string_view value) {
  if (value.empty()) {
    NoteBindResult(sqlite3_bind_zeroblob(stmt_, index, 0));
  } else {
    NoteBindResult(sqlite3_bind_blob64(stmt_, index, value.data(), value.size(),
                                       SQLITE_TRANSIENT));
  }
  return *this;
}

Statement& Statement::BindNull(int index) {
  NoteBindResult(sqlite3_bind_null(stmt_, index));
  return *this;
}

Statement& Statement::BindBool(int index, bool value) {
  return BindInt64(index, value ? 1 : 0);
}

absl::StatusOr<bool> Statement::Step() {
  if (stmt_ == nullptr) {
    return absl::FailedPreconditionError("Step() on an empty Statement");
  }
  if (!bind_status_.ok()) return bind_status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    // Rewind (keeping the bindings) so the statement can be bound and run
    // again at once: binding a finished, un-reset statement is SQLITE_MISUSE.
    sqlite3_reset(stmt_);
    return false;
  }
  absl::Status status = SqliteError(rc, sqlite3_db_handle(stmt_), sql());
  sqlite3_reset(stmt_);  // releases the statement's locks and snapshot
  return status;
}

absl::Status Statement::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

int64_t Statement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::ColumnDouble(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::ColumnText(int column) const {
  // Pointer first, then size: the conversion may change the byte count.
  const unsigned char* data = sqlite3_column_text(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(data), static_cast<size_t>(size));
}

std::string Statement::ColumnBlob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr) return std::string();
  return std::string(static_cast<const char*>(data), static_cast<size_t>(size));
}

bool Statement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

bool Statement::ColumnBool(int column) const { return ColumnInt64(column) != 0; }

void Statement::Reset() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_status_ = absl::OkStatus();
}

absl::string_view Statement::sql() const {
  const char* text = stmt_ != nullptr ? sqlite3_sql(stmt_) : nullptr;
  return text != nullptr ? absl::string_view(text) : absl::string_view();
}

}  // namespace ptxbench::storage
