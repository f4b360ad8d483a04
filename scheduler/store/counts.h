#ifndef PTXBENCH_SCHEDULER_STORE_COUNTS_H_
#define PTXBENCH_SCHEDULER_STORE_COUNTS_H_

// Per-experiment counters, so that `status`, `status --watch`, the
// dashboard and /metrics read a few rows instead of scanning an
// experiment's trajectories and tasks (docs/ARCHITECTURE.md, "Storage"):
//   trajectory_counts(experiment, state, failure_class) -> trajectories,
//       turns_completed, correct, simulated (sums of those columns)
//   task_counts(experiment, state, kind) -> tasks
// SQLite triggers on `trajectories` and `tasks` keep them, so every write of
// a row, whatever code makes it, changes its counters in its own
// transaction: a crash cannot leave them behind the rows. Schema version 10
// creates them, fills them from the rows, and adds the triggers.
//
// This file depends only on storage/, so the CLI's `admin check` can read a
// database without linking the scheduler.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

// The tables, their filling from the rows, and the triggers (migration 10).
const std::string& CountsSchemaSql();

// The counters recomputed from the rows and compared with the stored ones,
// in one read transaction: one line per difference ("experiment 3,
// trajectories in state 2 / failure class 0: stored 10, rows 11"); none
// when they agree.
absl::StatusOr<std::vector<std::string>> CheckCounts(storage::Database& db);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_COUNTS_H_
