#include "storage/blob_store.h"

#include <zstd.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "common/status_macros.h"

namespace ptxbench::storage {

const char kBlobTableSql[] =
    "CREATE TABLE blobs(hash TEXT PRIMARY KEY, codec INTEGER NOT NULL, "
    "raw_size INTEGER NOT NULL, data BLOB NOT NULL) WITHOUT ROWID";

namespace {

constexpr int kZstdLevel = 3;
// A raw_size beyond this is a damaged row, not a real blob.
constexpr int64_t kMaxRawSize = int64_t{1} << 32;

bool IsSha256Hex(absl::string_view hash) {
  if (hash.size() != 64) return false;
  for (char c : hash) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// `data` compressed, or empty when compression saves 10% or less.
absl::StatusOr<std::string> CompressIfWorthIt(absl::string_view data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t size = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), kZstdLevel);
  if (ZSTD_isError(size)) {
    return absl::InternalError(absl::StrCat("zstd: ", ZSTD_getErrorName(size)));
  }
  if (size * 10 >= data.size() * 9) return std::string();
  out.resize(size);
  return out;
}

absl::StatusOr<std::string> Decode(absl::string_view hash, int64_t codec, int64_t raw_size,
                                   std::string data) {
  if (codec == static_cast<int>(BlobCodec::kRaw)) return data;
  if (codec != static_cast<int>(BlobCodec::kZstd)) {
    return absl::DataLossError(absl::StrCat("blob ", hash, " has unknown codec ", codec));
  }
  if (raw_size < 0 || raw_size > kMaxRawSize) {
    return absl::DataLossError(absl::StrCat("blob ", hash, " has bad raw_size ", raw_size));
  }
  // One decompression context per thread, reused: ZSTD_decompress makes and
  // frees one on every call, which cost more than the decompression itself
  // when an export reads a million small results.
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(),
                                                                           ZSTD_freeDCtx);
  std::string out(static_cast<size_t>(raw_size), '\0');
  size_t size =
      ZSTD_decompressDCtx(context.get(), out.data(), out.size(), data.data(), data.size());
  if (ZSTD_isError(size) || size != out.size()) {
    return absl::DataLossError(absl::StrCat(
        "blob ", hash, " does not decompress: ",
        ZSTD_isError(size) ? ZSTD_getErrorName(size) : "size differs from raw_size"));
  }
  return out;
}

}  // namespace

absl::StatusOr<bool> HasBlob(Database& db, absl::string_view hash) {
  PTXB_ASSIGN_OR_RETURN(Statement * select,
                        db.Cached("SELECT 1 FROM blobs WHERE hash = ?1"));
  select->BindText(1, hash);
  PTXB_ASSIGN_OR_RETURN(bool found, select->Step());
  select->Reset();
  return found;
}

absl::StatusOr<std::string> PutBlob(Database& db, absl::string_view data) {
  std::string hash = Sha256Hex(data);
  // Checked first so a blob put again is not compressed again.
  PTXB_ASSIGN_OR_RETURN(bool exists, HasBlob(db, hash));
  if (exists) return hash;
  PTXB_ASSIGN_OR_RETURN(std::string compressed, CompressIfWorthIt(data));
  const bool use_zstd = !compressed.empty();
  PTXB_ASSIGN_OR_RETURN(
      Statement * insert,
      db.Cached("INSERT OR IGNORE INTO blobs(hash, codec, raw_size, data) "
                "VALUES (?1, ?2, ?3, ?4)"));
  insert->BindText(1, hash)
      .BindInt64(2, static_cast<int>(use_zstd ? BlobCodec::kZstd : BlobCodec::kRaw))
      .BindInt64(3, static_cast<int64_t>(data.size()))
      .BindBlob(4, use_zstd ? absl::string_view(compressed) : data);
  PTXB_RETURN_IF_ERROR(insert->Run());
  return hash;
}

absl::StatusOr<std::string> GetBlob(Database& db, absl::string_view hash) {
  if (!IsSha256Hex(hash)) {
    return absl::InvalidArgumentError(
        absl::StrCat("blob hash '", hash, "' is not 64 lower-case hex digits"));
  }
  PTXB_ASSIGN_OR_RETURN(
      Statement * select,
      db.Cached("SELECT codec, raw_size, data FROM blobs WHERE hash = ?1"));
  select->BindText(1, hash);
  PTXB_ASSIGN_OR_RETURN(bool found, select->Step());
  if (!found) {
    return absl::NotFoundError(absl::StrCat("blob ", hash, " not found in ", db.path()));
  }
  int64_t codec = select->ColumnInt64(0);
  int64_t raw_size = select->ColumnInt64(1);
  std::string data = select->ColumnBlob(2);
  select->Reset();
  PTXB_ASSIGN_OR_RETURN(std::string content,
                        Decode(hash, codec, raw_size, std::move(data)));
  if (std::string actual = Sha256Hex(content); actual != hash) {
    return absl::DataLossError(
        absl::StrCat("blob ", hash, " is corrupt: its content hashes to ", actual));
  }
  return content;
}

}  // namespace ptxbench::storage
