#include "scheduler/store/event_log.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxbench::scheduler {

using storage::Statement;

const char kEventTableSql[] =
    "CREATE TABLE events(id INTEGER PRIMARY KEY, unix_ms INTEGER NOT NULL, "
    "experiment TEXT NOT NULL, trajectory TEXT NOT NULL DEFAULT '', "
    "turn INTEGER NOT NULL DEFAULT -1, kind TEXT NOT NULL, "
    "detail TEXT NOT NULL DEFAULT '');\n"
    "CREATE INDEX events_by_experiment ON events(experiment, id);";

absl::Status AppendEvent(storage::Database& db, const EventRecord& event) {
  if (event.experiment.empty() || event.kind.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "event needs an experiment and a kind (experiment '", event.experiment,
        "', kind '", event.kind, "')"));
  }
  PTXB_ASSIGN_OR_RETURN(
      Statement * insert,
      db.Cached("INSERT INTO events(unix_ms, experiment, trajectory, turn, kind, detail) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  insert->BindInt64(1, event.unix_ms)
      .BindText(2, event.experiment)
      .BindText(3, event.trajectory)
      .BindInt64(4, event.turn)
      .BindText(5, event.kind)
      .BindText(6, event.detail);
  return insert->Run();
}

absl::StatusOr<std::vector<EventRecord>> ReadEvents(storage::Database& db,
                                                    absl::string_view experiment,
                                                    int64_t after_id, int limit) {
  if (limit <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("event limit must be > 0, got ", limit));
  }
  PTXB_ASSIGN_OR_RETURN(
      Statement * select,
      db.Cached("SELECT id, unix_ms, experiment, trajectory, turn, kind, detail "
                "FROM events WHERE experiment = ?1 AND id > ?2 ORDER BY id LIMIT ?3"));
  select->BindText(1, experiment).BindInt64(2, after_id).BindInt64(3, limit);
  std::vector<EventRecord> events;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, select->Step());
    if (!row) break;
    EventRecord& e = events.emplace_back();
    e.id = select->ColumnInt64(0);
    e.unix_ms = select->ColumnInt64(1);
    e.experiment = select->ColumnText(2);
    e.trajectory = select->ColumnText(3);
    e.turn = static_cast<int>(select->ColumnInt64(4));
    e.kind = select->ColumnText(5);
    e.detail = select->ColumnText(6);
  }
  return events;
}

absl::StatusOr<int64_t> LastEventId(storage::Database& db, absl::string_view experiment) {
  PTXB_ASSIGN_OR_RETURN(Statement * select,
                        db.Cached("SELECT max(id) FROM events WHERE experiment = ?1"));
  select->BindText(1, experiment);
  PTXB_ASSIGN_OR_RETURN(bool row, select->Step());
  int64_t id = (row && !select->ColumnIsNull(0)) ? select->ColumnInt64(0) : 0;
  select->Reset();
  return id;
}

}  // namespace ptxbench::scheduler
