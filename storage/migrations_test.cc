#include "storage/migrations.h"

#include <string>
#include <vector>

#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/test_util.h"

namespace ptxbench::storage {
namespace {

using ::testing::HasSubstr;
using testing::ReadFile;
using testing::TempDbPath;
using testing::WriteFile;

constexpr uint32_t kAppId = 0x50545842;  // "PTXB"

const std::vector<Migration> kV1 = {{1, "CREATE TABLE a(x INTEGER);"}};
const std::vector<Migration> kV2 = {{1, "CREATE TABLE a(x INTEGER);"},
                                    {2, "CREATE TABLE b(y TEXT); INSERT INTO a VALUES (2);"}};

int64_t QueryInt(Database& db, absl::string_view sql) {
  auto statement = db.Prepare(sql);
  EXPECT_TRUE(statement.ok()) << statement.status();
  auto row = statement->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return statement->ColumnInt64(0);
}

std::unique_ptr<Database> OpenPlain(const std::string& path, bool wal = true) {
  Database::Options options;
  options.wal = wal;
  auto db = Database::Open(path, options);
  EXPECT_TRUE(db.ok()) << db.status();
  return std::move(db).value();
}

TEST(MigrationsTest, NewDatabaseGetsIdAndAllMigrations) {
  TempDbPath temp;
  auto db = OpenAndMigrate(temp.path(), {}, kAppId, "ptxbench", kV2);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(static_cast<uint32_t>(QueryInt(**db, "PRAGMA application_id")), kAppId);
  EXPECT_EQ(SchemaVersion(**db).value_or(-1), 2);
  EXPECT_EQ(QueryInt(**db, "SELECT count(*) FROM a"), 1);
  EXPECT_EQ(QueryInt(**db, "SELECT count(*) FROM b"), 0);
  auto mode = (*db)->Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok() && mode->Step().value_or(false));
  EXPECT_EQ(mode->ColumnText(0), "wal");
}

TEST(MigrationsTest, UpgradeAppliesOnlyNewVersions) {
  TempDbPath temp;
  auto db = OpenPlain(temp.path());
  ASSERT_TRUE(Migrate(*db, kAppId, "ptxbench", kV1).ok());
  EXPECT_EQ(SchemaVersion(*db).value_or(-1), 1);
  // Re-running version 1 would fail: CREATE TABLE a exists.
  absl::Status status = Migrate(*db, kAppId, "ptxbench", kV2);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(SchemaVersion(*db).value_or(-1), 2);
  EXPECT_TRUE(Migrate(*db, kAppId, "ptxbench", kV2).ok());
  EXPECT_EQ(QueryInt(*db, "SELECT count(*) FROM a"), 1);
}

TEST(MigrationsTest, CurrentSchemaNeedsNoWrite) {
  TempDbPath temp;
  ASSERT_TRUE(OpenAndMigrate(temp.path(), {}, kAppId, "ptxbench", kV2).ok());
  Database::Options read_only;
  read_only.read_only = true;
  auto reader = Database::Open(temp.path(), read_only);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE(Migrate(**reader, kAppId, "ptxbench", kV2).ok());
}

TEST(MigrationsTest, OtherApplicationIsRefusedAndLeftByteIdentical) {
  TempDbPath temp;
  {
    auto other = OpenPlain(temp.path(), /*wal=*/false);
    ASSERT_TRUE(other->Execute("PRAGMA application_id = 305419896;"  // 0x12345678
                               "CREATE TABLE theirs(z);")
                    .ok());
  }
  const std::string before = ReadFile(temp.path());
  auto db = OpenAndMigrate(temp.path(), {}, kAppId, "ptxbench", kV2);
  EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(db.status().message(),
            temp.path() + " is not a ptxbench database (application_id 0x12345678)");
  EXPECT_EQ(ReadFile(temp.path()), before);
}

TEST(MigrationsTest, UnstampedFileWithTablesIsSomeoneElses) {
  TempDbPath temp;
  auto db = OpenPlain(temp.path());
  ASSERT_TRUE(db->Execute("CREATE TABLE theirs(z)").ok());
  absl::Status status = Migrate(*db, kAppId, "ptxbench", kV1);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            temp.path() + " is not a ptxbench database (application_id 0x00000000)");
  EXPECT_EQ(QueryInt(*db, "PRAGMA application_id"), 0);
  EXPECT_EQ(SchemaVersion(*db).value_or(-1), 0);
}

TEST(MigrationsTest, NonSqliteFileIsRefusedAndLeftByteIdentical) {
  TempDbPath temp;
  const std::string content = "# my notes\nthis is definitely not SQLite\n";
  WriteFile(temp.path(), content);
  auto db = OpenAndMigrate(temp.path(), {}, kAppId, "ptxbench", kV1);
  EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(db.status().message(),
            temp.path() + " is not a ptxbench database (not an SQLite file)");
  EXPECT_EQ(ReadFile(temp.path()), content);
}

TEST(MigrationsTest, NewerSchemaIsRefused) {
  TempDbPath temp;
  ASSERT_TRUE(OpenAndMigrate(temp.path(), {}, kAppId, "ptxbench", kV2).ok());
  auto db = OpenAndMigrate(temp.path(), {}, kAppId, "ptxbench", kV1);
  EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(db.status().message(),
            temp.path() +
                " has schema version 2, newer than this build supports (1); upgrade ptxbench");
}

TEST(MigrationsTest, FailingMigrationRollsBackAloneAndKeepsEarlierOnes) {
  auto db = Database::Open(":memory:", {});
  ASSERT_TRUE(db.ok());
  const std::vector<Migration> broken = {
      {1, "CREATE TABLE a(x);"},
      {2, "CREATE TABLE half(y); INSERT INTO nowhere VALUES (1);"}};
  absl::Status status = Migrate(**db, kAppId, "ptxbench", broken);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("migration to version 2 failed"));
  EXPECT_THAT(status.message(), HasSubstr("no such table: nowhere"));
  EXPECT_EQ(SchemaVersion(**db).value_or(-1), 1);
  EXPECT_EQ(QueryInt(**db, "SELECT count(*) FROM sqlite_master WHERE name = 'half'"), 0);
  EXPECT_EQ(static_cast<uint32_t>(QueryInt(**db, "PRAGMA application_id")), kAppId);
}

// A migration's rows step runs once, after its SQL, in its transaction.
absl::Status DoubleEveryX(Database& db) { return db.Execute("UPDATE a SET x = 2 * x;"); }
absl::Status RowsThatFail(Database& db) {
  PTXB_RETURN_IF_ERROR(db.Execute("UPDATE a SET x = 0;"));
  return absl::DataLossError("row 1 does not parse");
}

TEST(MigrationsTest, RowsStepRunsOnceAfterItsSql) {
  TempDbPath temp;
  const std::vector<Migration> v2 = {{1, "CREATE TABLE a(x INTEGER);"},
                                     {2, "INSERT INTO a VALUES (5);", DoubleEveryX}};
  auto db = OpenAndMigrate(temp.path(), {}, kAppId, "ptxbench", kV1);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Execute("INSERT INTO a VALUES (3);").ok());
  ASSERT_TRUE(Migrate(**db, kAppId, "ptxbench", v2).ok());
  EXPECT_EQ(QueryInt(**db, "SELECT sum(x) FROM a"), 16) << "(3 + 5) doubled";
  ASSERT_TRUE(Migrate(**db, kAppId, "ptxbench", v2).ok());
  EXPECT_EQ(QueryInt(**db, "SELECT sum(x) FROM a"), 16) << "not again once current";
}

TEST(MigrationsTest, FailingRowsStepRollsBackItsMigration) {
  auto db = Database::Open(":memory:", {});
  ASSERT_TRUE(db.ok());
  const std::vector<Migration> broken = {
      {1, "CREATE TABLE a(x); INSERT INTO a VALUES (7);"},
      {2, "CREATE TABLE half(y);", RowsThatFail}};
  absl::Status status = Migrate(**db, kAppId, "ptxbench", broken);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("migration to version 2 failed: row 1 does not parse"));
  EXPECT_EQ(SchemaVersion(**db).value_or(-1), 1);
  EXPECT_EQ(QueryInt(**db, "SELECT count(*) FROM sqlite_master WHERE name = 'half'"), 0);
  EXPECT_EQ(QueryInt(**db, "SELECT x FROM a"), 7);
}

TEST(MigrationsTest, BadMigrationListIsInvalidArgument) {
  auto db = Database::Open(":memory:", {});
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(Migrate(**db, kAppId, "p", {{2, "SELECT 1"}, {1, "SELECT 1"}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Migrate(**db, kAppId, "p", {{0, "SELECT 1"}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Migrate(**db, kAppId, "p", {{1, nullptr}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(QueryInt(**db, "PRAGMA application_id"), 0);
}

}  // namespace
}  // namespace ptxbench::storage
