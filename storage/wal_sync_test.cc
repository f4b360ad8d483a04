#include "storage/wal_sync.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "storage/database.h"
#include "storage/test_util.h"

namespace ptxbench::storage {
namespace {

TEST(WalSyncTest, SyncsTheWalOfACommittedWrite) {
  testing::TempDbPath temp;
  auto db = Database::Open(temp.path(), {});
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)").ok());
  ASSERT_TRUE(std::filesystem::exists(temp.path() + "-wal"));
  WalSync sync(temp.path());
  EXPECT_TRUE(sync.Sync().ok());
  EXPECT_TRUE((*db)->Execute("INSERT INTO t VALUES (2)").ok());
  EXPECT_TRUE(sync.Sync().ok());  // the descriptor opened by the first
}

TEST(WalSyncTest, AMissingWalIsAnErrorNamingIt) {
  testing::TempDbPath temp;
  WalSync sync(temp.path());
  absl::Status status = sync.Sync();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_NE(status.message().find(temp.path() + "-wal"), absl::string_view::npos) << status;
}

}  // namespace
}  // namespace ptxbench::storage
