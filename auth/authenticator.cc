#include "auth/authenticator.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "auth/token.h"

namespace ptxbench::auth {

void Authenticator::Add(const std::string& token_hash, Principal principal) {
  absl::MutexLock lock(&mu_);
  std::erase_if(by_hash_, [&](const auto& entry) { return entry.second.name == principal.name; });
  by_hash_[token_hash] = std::move(principal);
}

void Authenticator::Remove(const std::string& name) {
  absl::MutexLock lock(&mu_);
  std::erase_if(by_hash_, [&](const auto& entry) { return entry.second.name == name; });
}

absl::StatusOr<Principal> Authenticator::Authenticate(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) const {
  auto it = metadata.find(kAuthorizationKey);
  if (it == metadata.end()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "no token: pass --token-file FILE or set ", kTokenEnvironment,
        " (ptxbench token create makes one; the scheduler's data directory holds ",
        kAdminTokenFile, ")"));
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::ConsumePrefix(&value, kBearer)) {
    return absl::UnauthenticatedError("malformed authorization: expected \"Bearer <token>\"");
  }
  return AuthenticateToken(value);
}

absl::StatusOr<Principal> Authenticator::AuthenticateToken(absl::string_view token) const {
  if (LooksLikeToken(token)) {
    const std::string hash = TokenHash(token);
    absl::ReaderMutexLock lock(&mu_);
    auto it = by_hash_.find(hash);
    if (it != by_hash_.end()) return it->second;
  }
  return absl::UnauthenticatedError("unknown or revoked token");
}

}  // namespace ptxbench::auth
