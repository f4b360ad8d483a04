#ifndef PTXBENCH_SCHEDULER_STORE_EVENT_LOG_H_
#define PTXBENCH_SCHEDULER_STORE_EVENT_LOG_H_

// The append-only event table: one row per state transition. It feeds
// `status --watch` (readers poll with the last id they saw), audits and
// debugging. Rows are never updated or deleted by this API.
//
// The schema owner includes kEventTableSql in a migration. Functions use the
// Database's cached statements; thread safety is the Database's (one owner
// thread). AppendEvent writes, so it belongs on the write connection (e.g.
// inside a WriteQueue op); the readers work on any connection.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

// CREATE TABLE events(...) plus an index on (experiment, id).
extern const char kEventTableSql[];

struct EventRecord {
  int64_t id = 0;       // assigned by AppendEvent, ascending
  int64_t unix_ms = 0;  // when it happened (the caller's clock)
  std::string experiment;
  std::string trajectory;  // empty for experiment-level events
  int turn = -1;           // -1 when not about one turn
  std::string kind;        // e.g. "trajectory.submitted"
  std::string detail;      // free text or JSON
};

// Appends `event` (its `id` is ignored; the new id is db.LastInsertRowId()).
// kInvalidArgument if experiment or kind is empty.
absl::Status AppendEvent(storage::Database& db, const EventRecord& event);

// Up to `limit` (> 0, else kInvalidArgument) events of `experiment` with
// id > after_id, in ascending id order. Pass the last id seen to follow on.
absl::StatusOr<std::vector<EventRecord>> ReadEvents(storage::Database& db,
                                                    absl::string_view experiment,
                                                    int64_t after_id, int limit);

// The highest event id of `experiment`, 0 if it has none.
absl::StatusOr<int64_t> LastEventId(storage::Database& db, absl::string_view experiment);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_EVENT_LOG_H_
