#include "storage/database.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/sqlite_error.h"
#include "storage/test_util.h"

namespace ptxbench::storage {
namespace {

using ::testing::HasSubstr;
using testing::ReadFile;
using testing::TempDbPath;
using testing::WriteFile;

// Binding a double, bool or uint64_t as Int64 must not compile.
template <typename T>
concept CanBindInt64 = requires(Statement s, T v) { s.BindInt64(1, v); };
static_assert(CanBindInt64<int64_t> && CanBindInt64<int>);
static_assert(!CanBindInt64<double> && !CanBindInt64<bool> && !CanBindInt64<uint64_t>);

std::unique_ptr<Database> OpenMemory() {
  auto db = Database::Open(":memory:", {});
  EXPECT_TRUE(db.ok()) << db.status();
  return std::move(db).value();
}

int64_t QueryInt(Database& db, absl::string_view sql) {
  auto statement = db.Prepare(sql);
  EXPECT_TRUE(statement.ok()) << statement.status();
  auto row = statement->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return statement->ColumnInt64(0);
}

TEST(DatabaseTest, TypedBindsRoundTrip) {
  auto db = OpenMemory();
  ASSERT_TRUE(db->Execute("CREATE TABLE t(i INTEGER, d REAL, s TEXT, b BLOB, n, f INTEGER)").ok());
  const std::string binary("a\0b\xff", 4);
  auto insert = db->Prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  ASSERT_TRUE(insert.ok()) << insert.status();
  insert->BindInt64(1, std::numeric_limits<int64_t>::min())
      .BindDouble(2, 0.25)
      .BindText(3, "héllo")
      .BindBlob(4, binary)
      .BindNull(5)
      .BindBool(6, true);
  ASSERT_TRUE(insert->Run().ok());
  EXPECT_EQ(db->LastInsertRowId(), 1);
  EXPECT_EQ(db->Changes(), 1);

  auto select = db->Prepare("SELECT i, d, s, b, n, f FROM t");
  ASSERT_TRUE(select.ok());
  ASSERT_EQ(select->Step().value_or(false), true);
  EXPECT_EQ(select->ColumnInt64(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(select->ColumnDouble(1), 0.25);
  EXPECT_EQ(select->ColumnText(2), "héllo");
  EXPECT_EQ(select->ColumnBlob(3), binary);
  EXPECT_TRUE(select->ColumnIsNull(4));
  EXPECT_FALSE(select->ColumnIsNull(3));
  EXPECT_TRUE(select->ColumnBool(5));
  EXPECT_EQ(select->Step().value_or(true), false);
}

TEST(DatabaseTest, EmptyTextAndBlobAreNotNull) {
  auto db = OpenMemory();
  auto select = db->Prepare("SELECT typeof(?1), typeof(?2)");
  ASSERT_TRUE(select.ok());
  select->BindText(1, absl::string_view()).BindBlob(2, "");
  ASSERT_EQ(select->Step().value_or(false), true);
  EXPECT_EQ(select->ColumnText(0), "text");
  EXPECT_EQ(select->ColumnText(1), "blob");
}

TEST(DatabaseTest, BindErrorIsReturnedByStepAndClearedByReset) {
  auto db = OpenMemory();
  auto select = db->Prepare("SELECT ?1");
  ASSERT_TRUE(select.ok());
  select->BindInt64(7, 1);  // no parameter 7
  EXPECT_EQ(select->Step().status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(select->Run().code(), absl::StatusCode::kInvalidArgument);
  select->Reset();
  select->BindInt64(1, 5);
  ASSERT_EQ(select->Step().value_or(false), true);
  EXPECT_EQ(select->ColumnInt64(0), 5);
}

TEST(DatabaseTest, CachedStatementIsReusedResetAndCleared) {
  auto db = OpenMemory();
  auto first = db->Cached("SELECT ?1");
  ASSERT_TRUE(first.ok());
  (*first)->BindInt64(1, 42);
  ASSERT_EQ((*first)->Step().value_or(false), true);  // left mid-result
  auto second = db->Cached("SELECT ?1");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
  ASSERT_EQ((*second)->Step().value_or(false), true);
  EXPECT_TRUE((*second)->ColumnIsNull(0));  // the binding was cleared
}

TEST(DatabaseTest, PrepareRejectsScriptsAndEmptySql) {
  auto db = OpenMemory();
  EXPECT_EQ(db->Prepare("SELECT 1; SELECT 2").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db->Prepare("  ").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db->Prepare("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(db->Prepare("SELECT 1;  ").ok());
}

TEST(DatabaseTest, ErrorsMapByRetryMeaningAndQuoteTheSql) {
  auto db = OpenMemory();
  ASSERT_TRUE(db->Execute("CREATE TABLE p(id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);"
                          "CREATE TABLE c(pid INTEGER REFERENCES p(id));"
                          "INSERT INTO p VALUES (1, 'x');")
                  .ok());
  absl::Status dup = db->Execute("INSERT INTO p VALUES (2, 'x')");
  EXPECT_EQ(dup.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(dup.message(), HasSubstr("UNIQUE constraint failed"));
  EXPECT_THAT(dup.message(), HasSubstr("INSERT INTO p VALUES (2, 'x')"));
  EXPECT_EQ(db->Execute("INSERT INTO p VALUES (1, 'y')").code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(db->Execute("INSERT INTO p VALUES (3, NULL)").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(db->Execute("INSERT INTO c VALUES (99)").code(),
            absl::StatusCode::kFailedPrecondition);  // foreign_keys=ON
  EXPECT_EQ(db->Execute("SELEC 1").code(), absl::StatusCode::kInternal);
}

TEST(DatabaseTest, LongSqlIsAbbreviatedInMessages) {
  std::string sql = "SELECT\n\n   " + std::string(200, 'x');
  std::string abbreviated = internal::AbbreviateSql(sql);
  EXPECT_EQ(abbreviated.substr(0, 9), "SELECT xx");
  EXPECT_EQ(abbreviated.size(), 83u);  // 80 characters and "..."
}

TEST(DatabaseTest, FileDatabaseIsConfigured) {
  TempDbPath temp;
  Database::Options options;
  options.synchronous_full = true;
  options.busy_timeout = absl::Milliseconds(1234);
  auto db = Database::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status();
  auto mode = (*db)->Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok());
  ASSERT_EQ(mode->Step().value_or(false), true);
  EXPECT_EQ(mode->ColumnText(0), "wal");
  EXPECT_EQ(QueryInt(**db, "PRAGMA foreign_keys"), 1);
  EXPECT_EQ(QueryInt(**db, "PRAGMA synchronous"), 2);  // FULL
  EXPECT_EQ(QueryInt(**db, "PRAGMA busy_timeout"), 1234);
  EXPECT_EQ((*db)->path(), temp.path());

  auto normal = Database::Open(temp.path(), {});
  ASSERT_TRUE(normal.ok());
  EXPECT_EQ(QueryInt(**normal, "PRAGMA synchronous"), 1);  // NORMAL
}

TEST(DatabaseTest, BusyDatabaseIsUnavailable) {
  TempDbPath temp;
  auto holder = Database::Open(temp.path(), {});
  ASSERT_TRUE(holder.ok());
  Database::Options impatient;
  impatient.busy_timeout = absl::ZeroDuration();
  auto other = Database::Open(temp.path(), impatient);
  ASSERT_TRUE(other.ok());
  Transaction held(holder->get());
  ASSERT_TRUE(held.Begin().ok());
  Transaction blocked(other->get());
  absl::Status status = blocked.Begin();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr(temp.path()));
}

TEST(DatabaseTest, ForeignFileIsRefusedAndLeftAlone) {
  TempDbPath temp;
  const std::string content = "not a database, just some text that is long enough\n";
  WriteFile(temp.path(), content);
  auto db = Database::Open(temp.path(), {});
  EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(db.status().message(), HasSubstr(temp.path()));
  EXPECT_EQ(ReadFile(temp.path()), content);
}

TEST(DatabaseTest, DamagedSqliteFileIsDataLoss) {
  TempDbPath temp;
  WriteFile(temp.path(), std::string("SQLite format 3\0", 16) + std::string(4096, '\x5a'));
  auto db = Database::Open(temp.path(), {});
  EXPECT_EQ(db.status().code(), absl::StatusCode::kDataLoss) << db.status();
}

TEST(DatabaseTest, MissingFileReadOnlyNamesThePath) {
  TempDbPath temp;
  Database::Options options;
  options.read_only = true;
  auto db = Database::Open(temp.path(), options);
  EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(db.status().message(), HasSubstr(temp.path()));
}

TEST(TransactionTest, CommitKeepsAndDestructorRollsBack) {
  auto db = OpenMemory();
  ASSERT_TRUE(db->Execute("CREATE TABLE t(x)").ok());
  {
    Transaction txn(db.get());
    ASSERT_TRUE(txn.Begin().ok());
    EXPECT_EQ(txn.Begin().code(), absl::StatusCode::kFailedPrecondition);
    ASSERT_TRUE(db->Execute("INSERT INTO t VALUES (1)").ok());
    ASSERT_TRUE(txn.Commit().ok());
    EXPECT_FALSE(db->InTransaction());
  }
  {
    Transaction txn(db.get());
    ASSERT_TRUE(txn.Begin().ok());
    ASSERT_TRUE(db->Execute("INSERT INTO t VALUES (2)").ok());
  }  // rolled back here
  EXPECT_FALSE(db->InTransaction());
  {
    Transaction txn(db.get());
    ASSERT_TRUE(txn.Begin().ok());
    ASSERT_TRUE(db->Execute("INSERT INTO t VALUES (3)").ok());
    ASSERT_TRUE(txn.Rollback().ok());
    EXPECT_EQ(txn.Commit().code(), absl::StatusCode::kFailedPrecondition);
  }
  EXPECT_EQ(QueryInt(*db, "SELECT count(*) FROM t"), 1);
  EXPECT_EQ(QueryInt(*db, "SELECT sum(x) FROM t"), 1);
}

TEST(StatementTest, MoveTransfersOwnership) {
  auto db = OpenMemory();
  auto prepared = db->Prepare("SELECT 7");
  ASSERT_TRUE(prepared.ok());
  Statement a = std::move(prepared).value();
  Statement b = std::move(a);
  EXPECT_FALSE(a.is_valid());
  EXPECT_EQ(a.Step().status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_EQ(b.Step().value_or(false), true);
  EXPECT_EQ(b.ColumnInt64(0), 7);
  EXPECT_EQ(b.sql(), "SELECT 7");
}

}  // namespace
}  // namespace ptxbench::storage
