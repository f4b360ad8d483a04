#ifndef PTXBENCH_AUTH_AUTHENTICATOR_H_
#define PTXBENCH_AUTH_AUTHENTICATOR_H_

// Who is calling: the scheduler's in-memory table of valid tokens (by hash)
// and the lookup every call makes. The table is loaded from the database at
// start and changed as tokens are created and revoked; the database is the
// record, this is the fast path (one SHA-256 and one map lookup per call).
//
// Thread-safe.

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/string_ref.h"
#include "ptxbench/v1/client.pb.h"

namespace ptxbench::auth {

// A token's name and role.
struct Principal {
  std::string name;
  ptxbench::v1::Role role = ptxbench::v1::ROLE_UNSPECIFIED;
};

class Authenticator {
 public:
  // A valid token, by the hash of it (TokenHash). Replaces any token of the
  // same name: a name holds one token at a time.
  void Add(const std::string& token_hash, Principal principal);
  // Forgets the token named `name`; calls with it fail from now on.
  void Remove(const std::string& name);

  // The principal of the "authorization: Bearer <token>" entry of a call's
  // metadata. UNAUTHENTICATED, saying which, when there is none, it is
  // malformed, or the token is unknown or revoked. Never echoes the token.
  absl::StatusOr<Principal> Authenticate(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) const;
  absl::StatusOr<Principal> AuthenticateToken(absl::string_view token) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, Principal> by_hash_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench::auth

#endif  // PTXBENCH_AUTH_AUTHENTICATOR_H_
