// Admin commands on the machine of the scheduler: admin backup, admin check.

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "cli/commands/commands.h"
#include "common/status_macros.h"
#include "scheduler/store/counts.h"
#include "storage/maintenance.h"

namespace ptxbench::cli {
namespace {

// The database of --data-dir, read-only, directly (not through the
// scheduler, which keeps writing beside: WAL readers never block it).
absl::StatusOr<std::unique_ptr<storage::Database>> OpenDataDir(const Invocation& inv,
                                                              std::string* db_path) {
  *db_path = (std::filesystem::path(inv.global.data_dir) / "ptxbench.db").string();
  if (!std::filesystem::exists(*db_path)) {
    return absl::NotFoundError(absl::StrCat("no database at ", *db_path,
                                            " (give the scheduler's --data-dir DIR; admin "
                                            "commands run on its machine)"));
  }
  storage::Database::Options options;
  options.read_only = true;
  return storage::Database::Open(*db_path, options);
}

// The copy is one read transaction of SQLite's backup API, a consistent
// snapshot.
absl::Status RunBackup(const Invocation& inv) {
  std::string db_path;
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<storage::Database> db, OpenDataDir(inv, &db_path));
  const std::string& out = inv.args.positionals[0];
  inv.err() << "backing up " << db_path << " to " << out << " ...\n" << std::flush;
  const absl::Time start = absl::Now();
  PTXB_ASSIGN_OR_RETURN(storage::BackupResult made, storage::BackupTo(*db, out));
  inv.out() << absl::StrFormat("backed up %s: %d pages, %.1f MiB in %.1f s; checked, mode 600\n",
                               out, made.pages, made.bytes / 1048576.0,
                               absl::ToDoubleSeconds(absl::Now() - start));
  return absl::OkStatus();
}

// The counters status reads (scheduler/store/counts.h) against the rows
// they count, in one read transaction.
absl::Status RunCheck(const Invocation& inv) {
  std::string db_path;
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<storage::Database> db, OpenDataDir(inv, &db_path));
  inv.err() << "checking " << db_path << " ...\n" << std::flush;
  const absl::Time start = absl::Now();
  PTXB_ASSIGN_OR_RETURN(std::vector<std::string> differences, scheduler::CheckCounts(*db));
  for (const std::string& d : differences) inv.out() << d << "\n";
  if (!differences.empty()) {
    return absl::DataLossError(absl::StrCat(differences.size(),
                                            " counters differ from the rows they count"));
  }
  inv.out() << absl::StrFormat("%s: every experiment's counters agree with its rows (%.1f s)\n",
                               db_path, absl::ToDoubleSeconds(absl::Now() - start));
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
  commands->push_back(
      {{"admin check",
        "",
        0,
        0,
        {},
        "check the database of --data-dir: its counters against the rows they count",
        "Status, the dashboard and /metrics read per-experiment counters that triggers keep\n"
        "in the same transaction as every write of a trajectory or task. This recomputes them\n"
        "from the rows, in one read transaction while the scheduler runs, and prints each\n"
        "difference; exit 0 when there is none. Run it on the scheduler's machine with its\n"
        "--data-dir."},
       RunCheck});
}

}  // namespace ptxbench::cli
