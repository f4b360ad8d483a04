#ifndef PTXBENCH_SCHEDULER_STORE_TOKEN_STORE_H_
#define PTXBENCH_SCHEDULER_STORE_TOKEN_STORE_H_

// The tokens table: a token's name, role, dates and the SHA-256 of it, never
// the token itself (auth/token.h). Internal to the scheduler.
//
// Threading: as Core (the writer thread), or the scheduler's start before the
// Dispatcher takes the database.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ptxbench/v1/client.pb.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

class TokenStore {
 public:
  explicit TokenStore(storage::Database* db) : db_(db) {}

  // Inserts a new token. INVALID_ARGUMENT for a malformed name or role,
  // ALREADY_EXISTS for a name in use (revoked tokens keep theirs: a name
  // always means one token, so whatever it owned stays its own).
  absl::Status Insert(const ptxbench::v1::TokenInfo& info, const std::string& hash);
  // Sets the token named info.name() to `hash`, valid again, creating it if
  // needed: the data directory's admin token, made anew when its file is gone.
  absl::Status Replace(const ptxbench::v1::TokenInfo& info, const std::string& hash);
  // Marks a token revoked at `now_ms`. NOT_FOUND for an unknown name,
  // FAILED_PRECONDITION when it already is.
  absl::StatusOr<ptxbench::v1::TokenInfo> Revoke(const std::string& name, int64_t now_ms);
  // Every token, oldest first.
  absl::StatusOr<std::vector<ptxbench::v1::TokenInfo>> List();
  // The valid (unrevoked) tokens with their hashes.
  absl::Status ForEachValid(
      const std::function<void(const ptxbench::v1::TokenInfo&, const std::string& hash)>& fn);
  // The hash of the valid token named `name`, or "" when there is none.
  absl::StatusOr<std::string> ValidHash(const std::string& name);
  // "<role>-<n>" with the smallest n not taken.
  absl::StatusOr<std::string> DefaultName(ptxbench::v1::Role role);

 private:
  storage::Database* db_;
};

// OK for 1 to 64 letters, digits, '-', '_' and '.'; else INVALID_ARGUMENT.
absl::Status CheckTokenName(const std::string& name);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_TOKEN_STORE_H_
