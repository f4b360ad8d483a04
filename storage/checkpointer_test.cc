#include "storage/checkpointer.h"

#include <filesystem>
#include <thread>

#include "gtest/gtest.h"
#include "storage/test_util.h"

namespace ptxbench::storage {
namespace {

// With auto-checkpoint off, only the Checkpointer moves WAL pages into the
// database file; once it has, the writer's next transaction restarts the WAL
// from its beginning instead of growing it.
TEST(CheckpointerTest, KeepsTheWalFromGrowingWithoutTheWriterCheckpointing) {
  testing::TempDbPath path;
  auto db = Database::Open(path.path(), {});
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Execute("PRAGMA wal_autocheckpoint = 0; CREATE TABLE t(x BLOB)").ok());
  const std::string wal = path.path() + "-wal";
  auto write_rounds = [&](int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE((*db)->Execute("INSERT INTO t VALUES(randomblob(4000))").ok());
    }
  };
  write_rounds(200);
  const auto grown = std::filesystem::file_size(wal);

  Checkpointer checkpointer(path.path(), absl::Milliseconds(10));
  ASSERT_TRUE(checkpointer.Start().ok());
  for (int i = 0; i < 200 && checkpointer.runs() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(checkpointer.runs(), 2);
  checkpointer.Stop();
  write_rounds(20);  // restarts the WAL from its beginning
  EXPECT_EQ(std::filesystem::file_size(wal), grown) << "the WAL did not grow";
  auto count = (*db)->Prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(count.ok() && *count->Step());
  EXPECT_EQ(count->ColumnInt64(0), 220);
}

}  // namespace
}  // namespace ptxbench::storage
