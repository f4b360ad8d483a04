#include "dashboard/session_store.h"

#include <set>

#include "gtest/gtest.h"

namespace ptxbench::dashboard {
namespace {

namespace v1 = ::ptxbench::v1;

bool IsHex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(SessionStoreTest, FindsASessionUntilItExpires) {
  FakeClock clock;
  SessionStore store(&clock, {absl::Hours(12)});
  Session s = store.Create("tok", "alice", v1::ROLE_READ);
  EXPECT_TRUE(IsHex64(s.id));
  EXPECT_TRUE(IsHex64(s.csrf));
  EXPECT_NE(s.id, s.csrf);
  EXPECT_EQ(s.expires, clock.Now() + absl::Hours(12));

  clock.Advance(absl::Hours(12) - absl::Milliseconds(1));
  std::optional<Session> found = store.Find(s.id);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->token, "tok");
  EXPECT_EQ(found->name, "alice");
  EXPECT_EQ(found->role, v1::ROLE_READ);
  EXPECT_EQ(found->csrf, s.csrf);

  clock.Advance(absl::Milliseconds(1));
  EXPECT_FALSE(store.Find(s.id).has_value());
  EXPECT_EQ(store.size(), 0u) << "an expired session is forgotten";
}

TEST(SessionStoreTest, UnknownEmptyAndRemovedIdsFindNothing) {
  FakeClock clock;
  SessionStore store(&clock, {});
  Session s = store.Create("tok", "alice", v1::ROLE_ADMIN);
  EXPECT_FALSE(store.Find("").has_value());
  EXPECT_FALSE(store.Find(s.csrf).has_value()) << "the CSRF token is not a session id";
  EXPECT_FALSE(store.Find(s.id.substr(0, 63)).has_value());
  store.Remove(s.id);
  EXPECT_FALSE(store.Find(s.id).has_value());
}

TEST(SessionStoreTest, IdsAreFreshEachTime) {
  FakeClock clock;
  SessionStore store(&clock, {});
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    Session s = store.Create("tok", "alice", v1::ROLE_READ);
    EXPECT_TRUE(seen.insert(s.id).second);
    EXPECT_TRUE(seen.insert(s.csrf).second);
  }
  EXPECT_EQ(store.size(), 200u);
}

TEST(SessionStoreTest, PastItsBoundTheSessionNearestItsEndGoes) {
  FakeClock clock;
  SessionStore store(&clock, {absl::Hours(1), 3});
  Session first = store.Create("a", "a", v1::ROLE_READ);
  clock.Advance(absl::Minutes(1));
  Session second = store.Create("b", "b", v1::ROLE_READ);
  Session third = store.Create("c", "c", v1::ROLE_READ);
  Session fourth = store.Create("d", "d", v1::ROLE_READ);
  EXPECT_EQ(store.size(), 3u);
  EXPECT_FALSE(store.Find(first.id).has_value());
  EXPECT_TRUE(store.Find(second.id).has_value());
  EXPECT_TRUE(store.Find(fourth.id).has_value());
}

TEST(SessionStoreTest, SecretsCompareWhole) {
  EXPECT_TRUE(SecretsEqual("abc", "abc"));
  EXPECT_FALSE(SecretsEqual("abc", "abd"));
  EXPECT_FALSE(SecretsEqual("abc", "ab"));
  EXPECT_FALSE(SecretsEqual("", "a"));
  EXPECT_TRUE(SecretsEqual("", ""));
}

}  // namespace
}  // namespace ptxbench::dashboard
