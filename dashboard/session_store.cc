#include "dashboard/session_store.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "absl/strings/escaping.h"
#include "common/hash.h"

namespace ptxbench::dashboard {

std::string RandomHex256() {
  unsigned char bytes[32];
  // A session id nobody can guess is the whole of the dashboard's
  // authentication: without randomness there is no safe way to go on.
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) std::abort();
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

bool SecretsEqual(absl::string_view a, absl::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Session SessionStore::Create(std::string token, std::string name, ptxbench::v1::Role role) {
  Session session;
  session.id = RandomHex256();
  session.csrf = RandomHex256();
  session.token = std::move(token);
  session.name = std::move(name);
  session.role = role;
  const absl::Time now = clock_->Now();
  session.expires = now + options_.ttl;
  absl::MutexLock lock(&mu_);
  DropExpired(now);
  if (by_hash_.size() >= options_.max_sessions && !by_hash_.empty()) {
    auto oldest = std::min_element(by_hash_.begin(), by_hash_.end(), [](const auto& a, const auto& b) {
      return a.second.expires < b.second.expires;
    });
    by_hash_.erase(oldest);
  }
  by_hash_[Sha256Hex(session.id)] = session;
  return session;
}

std::optional<Session> SessionStore::Find(absl::string_view id) {
  if (id.empty()) return std::nullopt;
  const std::string key = Sha256Hex(id);
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  auto it = by_hash_.find(key);
  if (it == by_hash_.end()) return std::nullopt;
  if (it->second.expires <= now) {
    by_hash_.erase(it);
    return std::nullopt;
  }
  return it->second;
}

void SessionStore::Remove(absl::string_view id) {
  const std::string key = Sha256Hex(id);
  absl::MutexLock lock(&mu_);
  by_hash_.erase(key);
}

size_t SessionStore::size() {
  absl::MutexLock lock(&mu_);
  DropExpired(clock_->Now());
  return by_hash_.size();
}

void SessionStore::DropExpired(absl::Time now) {
  mu_.AssertHeld();
  for (auto it = by_hash_.begin(); it != by_hash_.end();) {
    it = it->second.expires <= now ? by_hash_.erase(it) : std::next(it);
  }
}

}  // namespace ptxbench::dashboard
