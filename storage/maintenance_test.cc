#include "storage/maintenance.h"

#include <sys/stat.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/test_util.h"

namespace ptxbench::storage {
namespace {

using ::testing::HasSubstr;
using testing::TempDbPath;

std::unique_ptr<Database> OpenWithRows(const std::string& path, int rows) {
  auto db = Database::Open(path, {});
  EXPECT_TRUE(db.ok()) << db.status();
  EXPECT_TRUE((*db)->Execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
                             "CREATE INDEX t_v ON t(v);")
                  .ok());
  EXPECT_TRUE((*db)->Execute("BEGIN").ok());
  for (int i = 0; i < rows; ++i) {
    EXPECT_TRUE((*db)
                    ->Execute(absl::StrCat("INSERT INTO t(v) VALUES('", std::string(200, 'a' + i % 26),
                                           i, "')"))
                    .ok());
  }
  EXPECT_TRUE((*db)->Execute("COMMIT").ok());
  return *std::move(db);
}

int64_t Count(Database& db) {
  auto s = db.Prepare("SELECT count(*) FROM t");
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE(*s->Step());
  return s->ColumnInt64(0);
}

TEST(MaintenanceTest, ASoundFilePassesAndADamagedOneIsDataLoss) {
  TempDbPath path;
  {
    std::unique_ptr<Database> db = OpenWithRows(path.path(), 2000);
    EXPECT_TRUE(CheckIntegrity(*db).ok());
    ASSERT_TRUE(db->Execute("PRAGMA wal_checkpoint(TRUNCATE)").ok());
  }
  // Scribble over the middle of the file, past the header and schema pages.
  std::string bytes = testing::ReadFile(path.path());
  ASSERT_GT(bytes.size(), 64u * 1024);
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 8192; ++i) bytes[i] = '\x5a';
  testing::WriteFile(path.path(), bytes);
  auto db = Database::Open(path.path(), {});
  ASSERT_TRUE(db.ok()) << db.status();
  absl::Status damaged = CheckIntegrity(**db);
  EXPECT_EQ(damaged.code(), absl::StatusCode::kDataLoss) << damaged;
  EXPECT_THAT(damaged.message(), HasSubstr(path.path()));
  EXPECT_THAT(damaged.message(), HasSubstr("ptxbench admin backup"));
}

TEST(MaintenanceTest, BackupIsAConsistentPrivateCopyWhileAnotherConnectionWrites) {
  TempDbPath path;
  std::unique_ptr<Database> writer = OpenWithRows(path.path(), 3000);
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread load([&] {
    auto db = Database::Open(path.path(), {});
    ASSERT_TRUE(db.ok());
    while (!stop) {
      // Each commit adds two rows: a consistent copy holds an even count.
      ASSERT_TRUE((*db)->Execute("BEGIN; INSERT INTO t(v) VALUES('x'); "
                                 "INSERT INTO t(v) VALUES('y'); COMMIT;")
                      .ok());
      ++written;
    }
  });
  while (written < 20) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Database::Options read_only;
  read_only.read_only = true;
  auto source = Database::Open(path.path(), read_only);
  ASSERT_TRUE(source.ok()) << source.status();
  const std::string copy = path.path() + ".backup";
  absl::StatusOr<BackupResult> made = BackupTo(**source, copy);
  const int during = written;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop = true;
  load.join();
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_GT(made->pages, 100);
  EXPECT_GT(written, during) << "the writer was not held up by the backup";

  struct stat st;
  ASSERT_EQ(stat(copy.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto restored = Database::Open(copy, {});
  ASSERT_TRUE(restored.ok());
  EXPECT_TRUE(CheckIntegrity(**restored).ok());
  const int64_t rows = Count(**restored);
  EXPECT_GE(rows, 3000 + 2 * 20);
  EXPECT_EQ((rows - 3000) % 2, 0) << "the copy holds half a transaction";
  std::remove(copy.c_str());
}

TEST(MaintenanceTest, BackupRefusesToOverwriteItsSource) {
  TempDbPath path;
  std::unique_ptr<Database> db = OpenWithRows(path.path(), 10);
  absl::StatusOr<BackupResult> made = BackupTo(*db, path.path());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Count(*db), 10);
}

}  // namespace
}  // namespace ptxbench::storage
