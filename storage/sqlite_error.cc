#include "storage/sqlite_error.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::storage::internal {

absl::StatusCode SqliteStatusCode(int rc) {
  switch (rc) {
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_ROWID:
      return absl::StatusCode::kAlreadyExists;
    default:
      break;
  }
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CONSTRAINT:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return absl::StatusCode::kFailedPrecondition;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return absl::StatusCode::kDataLoss;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return absl::StatusCode::kInvalidArgument;
    case SQLITE_INTERRUPT:
      return absl::StatusCode::kCancelled;
    default:
      return absl::StatusCode::kInternal;
  }
}

std::string AbbreviateSql(absl::string_view sql) {
  constexpr size_t kMaxChars = 80;
  std::string out;
  bool in_space = false;
  for (char c : absl::StripAsciiWhitespace(sql)) {
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      in_space = true;
      continue;
    }
    if (in_space) out.push_back(' ');
    in_space = false;
    out.push_back(c);
    if (out.size() >= kMaxChars) {
      out.append("...");
      break;
    }
  }
  return out;
}

absl::Status SqliteError(int rc, sqlite3* db, absl::string_view sql) {
  std::string message;
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  if (file != nullptr && *file != '\0') absl::StrAppend(&message, file, ": ");
  absl::StrAppend(&message, db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
                  " (sqlite code ", rc, ")");
  if (!sql.empty()) absl::StrAppend(&message, " in \"", AbbreviateSql(sql), "\"");
  return absl::Status(SqliteStatusCode(rc), message);
}

}  // namespace ptxbench::storage::internal
