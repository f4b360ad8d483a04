#ifndef PTXBENCH_STORAGE_BLOB_STORE_H_
#define PTXBENCH_STORAGE_BLOB_STORE_H_

// Content-addressed blobs: large texts (prompts, answers, kernels, logs, PTX)
// are stored once under the lower-case hex SHA-256 of their content, zstd-
// compressed when that pays; rows elsewhere reference the hash. A 20k-token
// system prompt used by every turn is one row.
//
// The schema owner includes kBlobTableSql in a migration. Functions use the
// Database's cached statements; thread safety is the Database's (one owner
// thread). PutBlob writes, so it belongs on the write connection (e.g. inside
// a WriteQueue op); GetBlob works on any connection.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/database.h"

namespace ptxbench::storage {

// CREATE TABLE blobs(hash, codec, raw_size, data) WITHOUT ROWID.
extern const char kBlobTableSql[];

// How `blobs.data` is encoded. Stored values; never renumber.
enum class BlobCodec : int {
  kRaw = 0,
  kZstd = 1,
};

// Stores `data` if no blob with its hash exists yet and returns the hash.
// Compressed with zstd level 3 when that saves more than 10%.
absl::StatusOr<std::string> PutBlob(Database& db, absl::string_view data);

// The content stored under `hash`. kInvalidArgument if `hash` is not 64
// lower-case hex digits, kNotFound naming the hash if there is no such blob,
// kDataLoss if it cannot be decoded or does not hash to `hash`.
absl::StatusOr<std::string> GetBlob(Database& db, absl::string_view hash);

// Whether a blob with `hash` is stored (no decoding, no verification).
absl::StatusOr<bool> HasBlob(Database& db, absl::string_view hash);

}  // namespace ptxbench::storage

#endif  // PTXBENCH_STORAGE_BLOB_STORE_H_
