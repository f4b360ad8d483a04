#ifndef PTXBENCH_AUTH_TOKEN_H_
#define PTXBENCH_AUTH_TOKEN_H_

// Bearer tokens (docs/SECURITY.md, "Tokens and roles"): what one looks like,
// how it is made, what the scheduler stores of it, and how a process reads
// its own. A token is "ptxb_" followed by 43 base64url characters: 256 bits
// from the kernel's random source, so a plain SHA-256 of it is a safe thing
// to store (nothing short enough to guess hides behind it) and a cheap thing
// to check on every call.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxbench/v1/client.pb.h"

namespace ptxbench::auth {

inline constexpr absl::string_view kTokenPrefix = "ptxb_";
// The gRPC metadata key and the scheme of its value ("Bearer <token>").
inline constexpr char kAuthorizationKey[] = "authorization";
inline constexpr absl::string_view kBearer = "Bearer ";
// Where clients and executors look for a token when no --token-file is given.
inline constexpr char kTokenEnvironment[] = "PTXBENCH_TOKEN";
// The data directory's admin token, written by the scheduler at first start.
inline constexpr char kAdminTokenFile[] = "admin.token";

// A new random token.
std::string GenerateToken();

// What the scheduler stores and compares: lower-case hex SHA-256.
std::string TokenHash(absl::string_view token);

// Has the prefix and the length and alphabet of a token.
bool LooksLikeToken(absl::string_view text);

// The token in `path`, whitespace around it removed. INVALID_ARGUMENT naming
// the path when it does not hold a token, or when group or others may read
// it (a token file must be private: chmod 600); NOT_FOUND when unreadable.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// Writes `token` to `path` with mode 0600 (atomically: no reader sees half).
absl::Status WriteTokenFile(const std::string& path, absl::string_view token);

// "admin", "submit", "read", "worker", "gateway"; "unspecified" for 0.
std::string RoleName(ptxbench::v1::Role role);
// INVALID_ARGUMENT listing the roles for an unknown name.
absl::StatusOr<ptxbench::v1::Role> ParseRole(absl::string_view name);

}  // namespace ptxbench::auth

#endif  // PTXBENCH_AUTH_TOKEN_H_
