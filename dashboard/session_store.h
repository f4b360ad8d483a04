#ifndef PTXBENCH_DASHBOARD_SESSION_STORE_H_
#define PTXBENCH_DASHBOARD_SESSION_STORE_H_

// The dashboard's signed-in sessions, in memory only. A session id (the
// value of the browser's cookie, 256 random bits) stands for the token the
// user typed at sign-in; the dashboard forwards that token on every call it
// makes to the scheduler, so the scheduler's own role checks decide what the
// user sees and may do. The token never leaves this process: it is not
// logged, not written anywhere and not sent back to the browser. A restart
// of the scheduler signs everyone out.
//
// Thread-safe.

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "ptxbench/v1/client.pb.h"

namespace ptxbench::dashboard {

struct Session {
  std::string id;     // 64 hex digits: the cookie's value
  std::string token;  // as typed; only ever sent to the scheduler
  std::string name;   // the token's name and role, as WhoAmI said
  ptxbench::v1::Role role = ptxbench::v1::ROLE_UNSPECIFIED;
  // 64 hex digits that every state-changing request of this session must
  // carry besides the cookie (X-CSRF-Token, or the form field "csrf"): a
  // page of another site can make the browser send the cookie, never this.
  std::string csrf;
  absl::Time expires;
};

// 256 bits from OpenSSL's generator, as 64 lower-case hex digits.
std::string RandomHex256();

// Constant-time comparison of two secrets (the timing reveals only whether
// the lengths differ).
bool SecretsEqual(absl::string_view a, absl::string_view b);

class SessionStore {
 public:
  struct Options {
    // A session ends this long after sign-in, used or not.
    absl::Duration ttl = absl::Hours(12);
    // Memory bound: signing in past it drops the session nearest its end.
    size_t max_sessions = 10'000;
  };

  // `clock` is not owned and must outlive the store.
  SessionStore(Clock* clock, Options options) : clock_(clock), options_(options) {}

  // A new session for a token the scheduler accepted.
  Session Create(std::string token, std::string name, ptxbench::v1::Role role)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The live session with this id; nullopt when unknown or expired (an
  // expired one is forgotten).
  std::optional<Session> Find(absl::string_view id) ABSL_LOCKS_EXCLUDED(mu_);
  void Remove(absl::string_view id) ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void DropExpired(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const Options options_;
  absl::Mutex mu_;
  // By the SHA-256 of the id, so that how long a lookup takes says nothing
  // about the ids that exist.
  std::map<std::string, Session> by_hash_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench::dashboard

#endif  // PTXBENCH_DASHBOARD_SESSION_STORE_H_
