#include "storage/blob_store.h"

#include <random>
#include <string>

#include "common/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/migrations.h"

namespace ptxbench::storage {
namespace {

using ::testing::HasSubstr;

class BlobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = Database::Open(":memory:", {});
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(db).value();
    ASSERT_TRUE(Migrate(*db_, 1, "test", {{1, kBlobTableSql}}).ok());
  }

  int64_t QueryInt(const std::string& sql) {
    auto statement = db_->Prepare(sql);
    EXPECT_TRUE(statement.ok()) << statement.status();
    EXPECT_TRUE(statement->Step().value_or(false)) << sql;
    return statement->ColumnInt64(0);
  }

  std::unique_ptr<Database> db_;
};

std::string Incompressible(size_t size) {
  std::mt19937_64 rng(42);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

std::string RepetitiveText(size_t size) {
  std::string out;
  for (int i = 0; out.size() < size; ++i) {
    out += "__global__ void kernel(float* out) { out[threadIdx.x] = " + std::to_string(i % 7) +
           "; }\n";
  }
  out.resize(size);
  return out;
}

TEST_F(BlobStoreTest, RoundTripsAnyContent) {
  for (const std::string& content :
       {std::string(), std::string("hello"), std::string("\0\x01\xff", 3),
        Incompressible(5000), RepetitiveText(20000)}) {
    auto hash = PutBlob(*db_, content);
    ASSERT_TRUE(hash.ok()) << hash.status();
    EXPECT_EQ(*hash, Sha256Hex(content));
    auto back = GetBlob(*db_, *hash);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, content);
    EXPECT_TRUE(HasBlob(*db_, *hash).value_or(false));
  }
  EXPECT_EQ(QueryInt("SELECT count(*) FROM blobs"), 5);
}

TEST_F(BlobStoreTest, SameContentIsStoredOnce) {
  const std::string prompt = RepetitiveText(50000);
  auto first = PutBlob(*db_, prompt);
  auto second = PutBlob(*db_, prompt);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
  ASSERT_TRUE(PutBlob(*db_, "other").ok());
  EXPECT_EQ(QueryInt("SELECT count(*) FROM blobs"), 2);
}

TEST_F(BlobStoreTest, RepetitiveTextIsCompressedIncompressibleIsRaw) {
  auto text = PutBlob(*db_, RepetitiveText(100 * 1024));
  auto noise = PutBlob(*db_, Incompressible(100 * 1024));
  ASSERT_TRUE(text.ok() && noise.ok());
  EXPECT_EQ(QueryInt("SELECT codec FROM blobs WHERE hash = '" + *text + "'"), 1);
  EXPECT_EQ(QueryInt("SELECT raw_size FROM blobs WHERE hash = '" + *text + "'"), 100 * 1024);
  EXPECT_LT(QueryInt("SELECT length(data) FROM blobs WHERE hash = '" + *text + "'"), 5 * 1024);
  EXPECT_EQ(QueryInt("SELECT codec FROM blobs WHERE hash = '" + *noise + "'"), 0);
  EXPECT_EQ(QueryInt("SELECT length(data) FROM blobs WHERE hash = '" + *noise + "'"),
            100 * 1024);
}

TEST_F(BlobStoreTest, CorruptRawBlobIsDataLoss) {
  auto hash = PutBlob(*db_, "a short text stored raw");
  ASSERT_TRUE(hash.ok());
  ASSERT_TRUE(db_->Execute("UPDATE blobs SET data = CAST('a short text stored RAW' AS BLOB)").ok());
  auto back = GetBlob(*db_, *hash);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(back.status().message(), HasSubstr(*hash));
}

TEST_F(BlobStoreTest, CorruptCompressedBlobIsDataLoss) {
  auto hash = PutBlob(*db_, RepetitiveText(10000));
  ASSERT_TRUE(hash.ok());
  ASSERT_EQ(QueryInt("SELECT codec FROM blobs"), 1);
  ASSERT_TRUE(db_->Execute("UPDATE blobs SET data = zeroblob(64)").ok());
  EXPECT_EQ(GetBlob(*db_, *hash).status().code(), absl::StatusCode::kDataLoss);
  ASSERT_TRUE(db_->Execute("UPDATE blobs SET codec = 9").ok());
  EXPECT_EQ(GetBlob(*db_, *hash).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(BlobStoreTest, MissingAndMalformedHashes) {
  const std::string absent = Sha256Hex("never stored");
  auto missing = GetBlob(*db_, absent);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr(absent));
  EXPECT_FALSE(HasBlob(*db_, absent).value_or(true));
  EXPECT_EQ(GetBlob(*db_, "abc").status().code(), absl::StatusCode::kInvalidArgument);
  std::string upper = absent;
  upper[0] = 'A';
  EXPECT_EQ(GetBlob(*db_, upper).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ptxbench::storage
