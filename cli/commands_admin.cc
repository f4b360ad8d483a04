// Admin commands on the machine of the scheduler: admin backup.

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "cli/commands.h"
#include "common/status_macros.h"
#include "storage/maintenance.h"

namespace ptxbench::cli {
namespace {

// Reads the database file directly (not through the scheduler): the copy is
// one read transaction of SQLite's backup API, a consistent snapshot that a
// running scheduler keeps writing beside.
absl::Status RunBackup(const Invocation& inv) {
  const std::string db_path = (std::filesystem::path(inv.global.data_dir) / "ptxbench.db").string();
  if (!std::filesystem::exists(db_path)) {
    return absl::NotFoundError(absl::StrCat(
        "no database at ", db_path, " (give the scheduler's --data-dir DIR; a backup runs on its "
                                    "machine)"));
  }
  storage::Database::Options options;
  options.read_only = true;
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<storage::Database> db,
                        storage::Database::Open(db_path, options));
  const std::string& out = inv.args.positionals[0];
  inv.err() << "backing up " << db_path << " to " << out << " ...\n" << std::flush;
  const absl::Time start = absl::Now();
  PTXB_ASSIGN_OR_RETURN(storage::BackupResult made, storage::BackupTo(*db, out));
  inv.out() << absl::StrFormat("backed up %s: %d pages, %.1f MiB in %.1f s; checked, mode 600\n",
                               out, made.pages, made.bytes / 1048576.0,
                               absl::ToDoubleSeconds(absl::Now() - start));
  return absl::OkStatus();
}

}  // namespace

void AddAdminCommands(std::vector<Command>* commands) {
  commands->push_back(
      {{"admin backup",
        "FILE",
        1,
        1,
        {},
        "copy the database of --data-dir to FILE, online, while experiments run",
        "A consistent snapshot through SQLite's backup API: the scheduler keeps running and\n"
        "writing. Run it on the scheduler's machine with its --data-dir. FILE is written\n"
        "whole or not at all, with mode 600 (it holds every prompt and answer), and is\n"
        "checked before it takes its name. To restore, stop the scheduler and put FILE in\n"
        "place of DIR/ptxbench.db (removing ptxbench.db-wal and -shm)."},
       RunBackup});
}

}  // namespace ptxbench::cli
