#include "storage/maintenance.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/status_macros.h"
#include "storage/sqlite_error.h"

namespace ptxbench::storage {

absl::Status CheckIntegrity(Database& db) {
  std::vector<std::string> findings;
  absl::StatusOr<Statement> check = db.Prepare("PRAGMA quick_check(3)");
  // A page too damaged to read fails the check itself rather than listing it.
  absl::Status read = check.status();
  while (read.ok()) {
    absl::StatusOr<bool> row = check->Step();
    read = row.status();
    if (!row.ok() || !*row) break;
    // One line for the user: SQLite's findings span several.
    findings.push_back(absl::StrReplaceAll(check->ColumnText(0), {{"\n", " "}}));
  }
  if (read.ok() && findings.size() == 1 && findings[0] == "ok") return absl::OkStatus();
  if (!read.ok()) findings.push_back(std::string(read.message()));
  return absl::DataLossError(absl::StrCat(
      db.path(), " failed SQLite's integrity check (", absl::StrJoin(findings, "; "),
      "); restore a backup (ptxbench admin backup) or move the file aside"));
}

absl::StatusOr<BackupResult> BackupTo(Database& source, const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) &&
      std::filesystem::equivalent(path, source.path(), ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the backup would overwrite the database itself: ", path));
  }
  const std::string temporary = absl::StrCat(path, ".tmp-", getpid());
  std::remove(temporary.c_str());
  // Created private before SQLite opens it.
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot create ", temporary));
  close(fd);
  auto fail = [&](absl::Status status) {
    std::remove(temporary.c_str());
    return status;
  };

  BackupResult result;
  {
    Database::Options options;
    options.wal = false;
    absl::StatusOr<std::unique_ptr<Database>> target = Database::Open(temporary, options);
    if (!target.ok()) return fail(target.status());
    sqlite3_backup* backup = sqlite3_backup_init((*target)->raw(), "main", source.raw(), "main");
    if (backup == nullptr) {
      return fail(internal::SqliteError(sqlite3_errcode((*target)->raw()), (*target)->raw(), "backup"));
    }
    // One step of every page: a step that stopped part way would restart
    // from scratch whenever the scheduler commits, and never end under load.
    int rc;
    int waits = 0;
    while ((rc = sqlite3_backup_step(backup, -1)) == SQLITE_BUSY || rc == SQLITE_LOCKED) {
      if (++waits > 200) break;
      sqlite3_sleep(50);
    }
    result.pages = sqlite3_backup_pagecount(backup);
    sqlite3_backup_finish(backup);
    if (rc != SQLITE_DONE) return fail(internal::SqliteError(rc, (*target)->raw(), "backup"));
    absl::Status sound = CheckIntegrity(**target);
    if (!sound.ok()) return fail(sound);
  }
  // The copy is durable before it takes the name.
  const int sync_fd = open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
  const bool synced = sync_fd >= 0 && fsync(sync_fd) == 0;
  if (sync_fd >= 0) close(sync_fd);
  if (!synced || std::rename(temporary.c_str(), path.c_str()) != 0) {
    return fail(absl::InternalError(absl::StrCat("cannot write ", path)));
  }
  result.bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  return result;
}

}  // namespace ptxbench::storage
