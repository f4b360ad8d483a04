#include "scheduler/store/counts.h"

#include <cstdint>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxbench::scheduler {

namespace {

// A trajectory's contribution to its counter added (NEW) or taken away
// (OLD), with an upsert on the counter's key; the triggers are made of these.
constexpr char kAddTrajectory[] = R"sql(
  INSERT INTO trajectory_counts VALUES(NEW.experiment, NEW.state, NEW.failure_class, 1,
      NEW.turns_completed, NEW.correct, NEW.simulated != 0)
    ON CONFLICT(experiment, state, failure_class) DO UPDATE SET
      trajectories = trajectories + 1, turns_completed = turns_completed + excluded.turns_completed,
      correct = correct + excluded.correct, simulated = simulated + excluded.simulated;)sql";
constexpr char kTakeTrajectory[] = R"sql(
  UPDATE trajectory_counts SET trajectories = trajectories - 1,
      turns_completed = turns_completed - OLD.turns_completed, correct = correct - OLD.correct,
      simulated = simulated - (OLD.simulated != 0)
    WHERE experiment = OLD.experiment AND state = OLD.state AND failure_class = OLD.failure_class;)sql";
constexpr char kAddTask[] = R"sql(
  INSERT INTO task_counts VALUES(NEW.experiment, NEW.state, NEW.kind, 1)
    ON CONFLICT(experiment, state, kind) DO UPDATE SET tasks = tasks + 1;)sql";
constexpr char kTakeTask[] = R"sql(
  UPDATE task_counts SET tasks = tasks - 1
    WHERE experiment = OLD.experiment AND state = OLD.state AND kind = OLD.kind;)sql";

constexpr char kCountTables[] = R"sql(
CREATE TABLE trajectory_counts(
  experiment INTEGER NOT NULL,
  state INTEGER NOT NULL,
  failure_class INTEGER NOT NULL,
  trajectories INTEGER NOT NULL,
  turns_completed INTEGER NOT NULL,
  correct INTEGER NOT NULL,
  simulated INTEGER NOT NULL,
  PRIMARY KEY(experiment, state, failure_class)
) WITHOUT ROWID;
CREATE TABLE task_counts(
  experiment INTEGER NOT NULL,
  state INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  tasks INTEGER NOT NULL,
  PRIMARY KEY(experiment, state, kind)
) WITHOUT ROWID;
INSERT INTO trajectory_counts
  SELECT experiment, state, failure_class, count(*), sum(turns_completed), sum(correct),
         sum(simulated != 0)
  FROM trajectories GROUP BY experiment, state, failure_class;
INSERT INTO task_counts
  SELECT experiment, state, kind, count(*) FROM tasks GROUP BY experiment, state, kind;
)sql";

}  // namespace

// An update that changes none of the counted columns touches no counter.
const std::string& CountsSchemaSql() {
  static const std::string* sql = new std::string(absl::StrCat(
      kCountTables,
      "CREATE TRIGGER trajectory_counts_insert AFTER INSERT ON trajectories BEGIN",
      kAddTrajectory, "\nEND;\n",
      "CREATE TRIGGER trajectory_counts_delete AFTER DELETE ON trajectories BEGIN",
      kTakeTrajectory, "\nEND;\n",
      "CREATE TRIGGER trajectory_counts_update\n"
      "AFTER UPDATE OF experiment, state, failure_class, turns_completed, correct, simulated\n"
      "ON trajectories\n"
      "WHEN OLD.experiment IS NOT NEW.experiment OR OLD.state IS NOT NEW.state\n"
      "  OR OLD.failure_class IS NOT NEW.failure_class\n"
      "  OR OLD.turns_completed IS NOT NEW.turns_completed OR OLD.correct IS NOT NEW.correct\n"
      "  OR (OLD.simulated != 0) IS NOT (NEW.simulated != 0)\nBEGIN",
      kTakeTrajectory, kAddTrajectory, "\nEND;\n",
      "CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks BEGIN", kAddTask, "\nEND;\n",
      "CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN", kTakeTask, "\nEND;\n",
      "CREATE TRIGGER task_counts_update AFTER UPDATE OF experiment, state, kind ON tasks\n"
      "WHEN OLD.experiment IS NOT NEW.experiment OR OLD.state IS NOT NEW.state\n"
      "  OR OLD.kind IS NOT NEW.kind\nBEGIN",
      kTakeTask, kAddTask, "\nEND;\n"));
  return *sql;
}

namespace {

using Key = std::tuple<int64_t, int64_t, int64_t>;
using Values = std::vector<int64_t>;

// Rows of `sql`: three key columns, then `values` value columns.
absl::StatusOr<std::map<Key, Values>> ReadCounts(storage::Database& db, const std::string& sql,
                                                 int values) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s, db.Cached(sql));
  std::map<Key, Values> out;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    Values v;
    for (int i = 0; i < values; ++i) v.push_back(s->ColumnInt64(3 + i));
    // A counter brought back to zero stays as a row of zeros: the same as none.
    bool zero = true;
    for (int64_t x : v) zero &= x == 0;
    if (!zero) out[{s->ColumnInt64(0), s->ColumnInt64(1), s->ColumnInt64(2)}] = std::move(v);
  }
  s->Reset();
  return out;
}

void Compare(const std::map<Key, Values>& stored, const std::map<Key, Values>& rows,
             const char* what, const char* second_key, const std::vector<const char*>& names,
             std::vector<std::string>* out) {
  std::map<Key, bool> keys;
  for (const auto& [k, v] : stored) keys[k] = true;
  for (const auto& [k, v] : rows) keys[k] = true;
  const Values zeros(names.size(), 0);
  for (const auto& [k, unused] : keys) {
    const auto s = stored.find(k);
    const auto r = rows.find(k);
    const Values& sv = s == stored.end() ? zeros : s->second;
    const Values& rv = r == rows.end() ? zeros : r->second;
    for (size_t i = 0; i < names.size(); ++i) {
      if (sv[i] == rv[i]) continue;
      out->push_back(absl::StrCat("experiment ", std::get<0>(k), ", ", what, " in state ",
                                  std::get<1>(k), " / ", second_key, " ", std::get<2>(k), ": ",
                                  names[i], " stored ", sv[i], ", rows ", rv[i]));
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<std::string>> CheckCounts(storage::Database& db) {
  PTXB_RETURN_IF_ERROR(db.Execute("BEGIN"));
  auto check = [&]() -> absl::StatusOr<std::vector<std::string>> {
    std::vector<std::string> out;
    const std::vector<const char*> trajectory_values = {"trajectories", "turns_completed",
                                                        "correct", "simulated"};
    PTXB_ASSIGN_OR_RETURN(
        auto stored,
        ReadCounts(db,
                   "SELECT experiment, state, failure_class, trajectories, turns_completed, "
                   "correct, simulated FROM trajectory_counts",
                   4));
    PTXB_ASSIGN_OR_RETURN(
        auto rows, ReadCounts(db,
                              "SELECT experiment, state, failure_class, count(*), "
                              "sum(turns_completed), sum(correct), sum(simulated != 0) FROM "
                              "trajectories GROUP BY experiment, state, failure_class",
                              4));
    Compare(stored, rows, "trajectories", "failure class", trajectory_values, &out);
    PTXB_ASSIGN_OR_RETURN(
        auto stored_tasks,
        ReadCounts(db, "SELECT experiment, state, kind, tasks FROM task_counts", 1));
    PTXB_ASSIGN_OR_RETURN(auto task_rows,
                          ReadCounts(db,
                                     "SELECT experiment, state, kind, count(*) FROM tasks "
                                     "GROUP BY experiment, state, kind",
                                     1));
    Compare(stored_tasks, task_rows, "tasks", "kind", {"tasks"}, &out);
    return out;
  };
  absl::StatusOr<std::vector<std::string>> result = check();
  PTXB_RETURN_IF_ERROR(db.Execute("COMMIT"));
  return result;
}

}  // namespace ptxbench::scheduler
