// The counters of counts.h follow every kind of write of the rows they
// count (insert, an update of a counted column or of none, delete), and the
// check names a counter that drifted.
#include "scheduler/store/counts.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "scheduler/store/schema.h"

namespace ptxbench::scheduler {
namespace {

class CountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::path(::testing::TempDir()) / absl::StrCat("counts_", getpid(), ".db");
    std::filesystem::remove(path_);
    auto db = OpenSchedulerDatabase(path_.string());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    Exec("INSERT INTO experiments(rowid, id, name, spec_hash, spec_json, priority, eval_mode, "
         "language, context_policy, max_cost_usd, num_turns, created_ms) "
         "VALUES(1, 'e1', 'n1', 'h', '{}', 0, 0, 'cuda', 'full', 0, 3, 0)");
    for (int i = 1; i <= 3; ++i) {
      Exec(absl::StrCat("INSERT INTO trajectories(rowid, id, experiment, model, definition, "
                        "prompt_tag, sample, num_turns, target_speedup, state, system_blob, "
                        "task_blob, updated_ms) VALUES(",
                        i, ", 't", i, "', 1, 'm', 'd', 'p', ", i, ", 3, 1.0, 0, '', '', 0)"));
      Exec(absl::StrCat("INSERT INTO tasks(experiment, trajectory, turn, kind, state, created_ms) "
                        "VALUES(1, ",
                        i, ", 0, 0, 0, 0)"));
    }
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove(path_);
  }
  void Exec(const std::string& sql) { ASSERT_TRUE(db_->Execute(sql).ok()) << sql; }
  int64_t Int(const std::string& sql) {
    auto s = db_->Prepare(sql);
    EXPECT_TRUE(s.ok() && *s->Step()) << sql;
    return s->ColumnInt64(0);
  }
  void ExpectAgree() {
    absl::StatusOr<std::vector<std::string>> d = CheckCounts(*db_);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_TRUE(d->empty()) << absl::StrJoin(*d, "\n");
  }

  std::filesystem::path path_;
  std::unique_ptr<storage::Database> db_;
};

TEST_F(CountsTest, InsertsUpdatesAndDeletesAreCounted) {
  EXPECT_EQ(Int("SELECT trajectories FROM trajectory_counts WHERE state = 0"), 3);
  EXPECT_EQ(Int("SELECT tasks FROM task_counts WHERE state = 0"), 3);
  Exec("UPDATE trajectories SET state = 2, turns_completed = 2, correct = 1 WHERE rowid = 1");
  Exec("UPDATE trajectories SET updated_ms = 5 WHERE rowid = 2");  // nothing counted changes
  Exec("UPDATE trajectories SET state = 4, failure_class = 3, simulated = 1 WHERE rowid = 3");
  Exec("UPDATE tasks SET state = 1 WHERE trajectory = 1");
  Exec("DELETE FROM tasks WHERE trajectory = 2");
  EXPECT_EQ(Int("SELECT trajectories FROM trajectory_counts WHERE state = 0"), 1);
  EXPECT_EQ(Int("SELECT turns_completed FROM trajectory_counts WHERE state = 2"), 2);
  EXPECT_EQ(Int("SELECT correct FROM trajectory_counts WHERE state = 2"), 1);
  EXPECT_EQ(Int("SELECT simulated FROM trajectory_counts WHERE state = 4 AND failure_class = 3"),
            1);
  EXPECT_EQ(Int("SELECT tasks FROM task_counts WHERE state = 0"), 1);
  EXPECT_EQ(Int("SELECT tasks FROM task_counts WHERE state = 1"), 1);
  ExpectAgree();
  Exec("DELETE FROM tasks");
  Exec("DELETE FROM trajectories");
  EXPECT_EQ(Int("SELECT sum(trajectories) FROM trajectory_counts"), 0);
  ExpectAgree();
}

TEST_F(CountsTest, TheCheckNamesACounterThatDrifted) {
  ExpectAgree();
  Exec("UPDATE trajectory_counts SET correct = 7 WHERE state = 0");
  absl::StatusOr<std::vector<std::string>> d = CheckCounts(*db_);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 1u);
  EXPECT_EQ((*d)[0],
            "experiment 1, trajectories in state 0 / failure class 0: correct stored 7, rows 0");
}

}  // namespace
}  // namespace ptxbench::scheduler
