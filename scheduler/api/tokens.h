#ifndef PTXBENCH_SCHEDULER_API_TOKENS_H_
#define PTXBENCH_SCHEDULER_API_TOKENS_H_

// The scheduler's start-up with tokens: the table of valid tokens in memory,
// and the admin token of the data directory.

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "auth/authenticator.h"
#include "scheduler/store/token_store.h"

namespace ptxbench::scheduler {

// The name of the data directory's admin token.
inline constexpr char kAdminTokenName[] = "admin";

// Adds every valid token of `store` to `authenticator`.
absl::Status LoadTokens(TokenStore& store, auth::Authenticator& authenticator);

// Makes sure DATA_DIR/admin.token (mode 0600) holds the valid admin token:
// on the first start, and whenever the file is missing, readable by others,
// or no longer matches, a new token replaces the one named "admin" (the old
// one stops working) and is written there. Whoever can read the data
// directory holds the database anyway; the file makes that explicit.
absl::Status EnsureAdminToken(TokenStore& store, const std::string& data_dir, absl::Time now);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_API_TOKENS_H_
