#include "scheduler/store/event_log.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "storage/migrations.h"
#include "storage/test_util.h"

namespace ptxbench::scheduler {
namespace {

using storage::Database;
using storage::Migration;
using storage::OpenAndMigrate;

const std::vector<Migration> kSchema = {{1, kEventTableSql}};

std::unique_ptr<Database> OpenEvents(const std::string& path) {
  auto db = OpenAndMigrate(path, {}, 1, "test", kSchema);
  EXPECT_TRUE(db.ok()) << db.status();
  return std::move(db).value();
}

EventRecord Event(const std::string& experiment, const std::string& kind, int turn = -1) {
  EventRecord e;
  e.unix_ms = 1'700'000'000'000;
  e.experiment = experiment;
  e.trajectory = turn >= 0 ? "traj-1" : "";
  e.turn = turn;
  e.kind = kind;
  e.detail = "{\"n\":" + std::to_string(turn) + "}";
  return e;
}

TEST(EventLogTest, AppendAndReadBackInOrder) {
  auto db = OpenEvents(":memory:");
  ASSERT_TRUE(AppendEvent(*db, Event("exp-a", "experiment.submitted")).ok());
  int64_t first_id = db->LastInsertRowId();
  ASSERT_TRUE(AppendEvent(*db, Event("exp-b", "experiment.submitted")).ok());
  ASSERT_TRUE(AppendEvent(*db, Event("exp-a", "turn.done", 0)).ok());
  ASSERT_TRUE(AppendEvent(*db, Event("exp-a", "turn.done", 1)).ok());

  auto events = ReadEvents(*db, "exp-a", 0, 100);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].id, first_id);
  EXPECT_EQ((*events)[0].kind, "experiment.submitted");
  EXPECT_EQ((*events)[0].trajectory, "");
  EXPECT_EQ((*events)[0].turn, -1);
  EXPECT_EQ((*events)[2].trajectory, "traj-1");
  EXPECT_EQ((*events)[2].turn, 1);
  EXPECT_EQ((*events)[2].detail, "{\"n\":1}");
  EXPECT_EQ((*events)[2].unix_ms, 1'700'000'000'000);
  EXPECT_EQ((*events)[2].experiment, "exp-a");
  EXPECT_LT((*events)[0].id, (*events)[1].id);
  EXPECT_LT((*events)[1].id, (*events)[2].id);
}

TEST(EventLogTest, PagesWithAfterIdAndLimit) {
  auto db = OpenEvents(":memory:");
  for (int turn = 0; turn < 5; ++turn) {
    ASSERT_TRUE(AppendEvent(*db, Event("exp", "turn.done", turn)).ok());
  }
  std::vector<int> turns;
  int64_t after = 0;
  int pages = 0;
  while (true) {
    auto page = ReadEvents(*db, "exp", after, 2);
    ASSERT_TRUE(page.ok());
    if (page->empty()) break;
    ++pages;
    for (const EventRecord& e : *page) turns.push_back(e.turn);
    after = page->back().id;
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(turns, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(LastEventId(*db, "exp").value_or(-1), after);
}

TEST(EventLogTest, LastEventIdFollowsAnotherConnection) {
  storage::testing::TempDbPath temp;
  auto writer = OpenEvents(temp.path());
  auto reader = OpenEvents(temp.path());
  EXPECT_EQ(LastEventId(*reader, "exp").value_or(-1), 0);
  ASSERT_TRUE(AppendEvent(*writer, Event("exp", "a")).ok());
  EXPECT_EQ(LastEventId(*reader, "exp").value_or(-1), writer->LastInsertRowId());
  ASSERT_TRUE(AppendEvent(*writer, Event("exp", "b")).ok());
  EXPECT_EQ(LastEventId(*reader, "exp").value_or(-1), writer->LastInsertRowId());
  EXPECT_EQ(LastEventId(*reader, "other").value_or(-1), 0);
}

TEST(EventLogTest, RejectsInvalidInput) {
  auto db = OpenEvents(":memory:");
  EXPECT_EQ(AppendEvent(*db, Event("", "kind")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AppendEvent(*db, Event("exp", "")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadEvents(*db, "exp", 0, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ptxbench::scheduler
