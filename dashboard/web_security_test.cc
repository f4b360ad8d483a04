#include "dashboard/web_security.h"

#include "dashboard/pages.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::dashboard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(WebSecurityTest, SessionCookieHasEveryAttribute) {
  EXPECT_EQ(SessionCookie("abc", absl::Hours(12), true),
            "ptxb_session=abc; Max-Age=43200; Path=/; HttpOnly; SameSite=Strict; Secure");
  EXPECT_EQ(SessionCookie("abc", absl::Hours(1), false),
            "ptxb_session=abc; Max-Age=3600; Path=/; HttpOnly; SameSite=Strict");
  EXPECT_EQ(ClearedSessionCookie(true),
            "ptxb_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict; Secure");
}

TEST(WebSecurityTest, ReadsOneCookieOutOfMany) {
  EXPECT_EQ(CookieValue("ptxb_session=abc", kSessionCookie), "abc");
  EXPECT_EQ(CookieValue("a=1; ptxb_session=abc; b=2", kSessionCookie), "abc");
  EXPECT_EQ(CookieValue("xptxb_session=abc; ptxb_sessionx=def", kSessionCookie), "");
  EXPECT_EQ(CookieValue("", kSessionCookie), "");
  EXPECT_EQ(CookieValue("ptxb_session", kSessionCookie), "");
  EXPECT_EQ(CookieValue("  ptxb_session=a=b ;", kSessionCookie), "a=b");
}

TEST(WebSecurityTest, SameOriginByFetchSiteElseByOrigin) {
  EXPECT_TRUE(SameOriginRequest("same-origin", "", "https", "h:1"));
  EXPECT_FALSE(SameOriginRequest("same-site", "https://h:1", "https", "h:1"))
      << "Sec-Fetch-Site decides when present";
  EXPECT_FALSE(SameOriginRequest("cross-site", "", "https", "h:1"));
  EXPECT_FALSE(SameOriginRequest("none", "", "https", "h:1"));
  EXPECT_TRUE(SameOriginRequest("", "https://h:1", "https", "h:1"));
  EXPECT_FALSE(SameOriginRequest("", "http://h:1", "https", "h:1"));
  EXPECT_FALSE(SameOriginRequest("", "https://evil:1", "https", "h:1"));
  EXPECT_FALSE(SameOriginRequest("", "null", "https", "h:1"));
  EXPECT_TRUE(SameOriginRequest("", "", "https", "h:1")) << "not a browser: the CSRF token guards";
}

TEST(WebSecurityTest, SchedulerErrorsBecomeTheirHttpStatus) {
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInternal), 500);
}

TEST(WebSecurityTest, PoliciesAllowNothingInlineOnThePages) {
  EXPECT_THAT(kPagePolicy, HasSubstr("default-src 'none'"));
  EXPECT_THAT(kPagePolicy, HasSubstr("script-src 'self';"));
  EXPECT_THAT(kPagePolicy, Not(HasSubstr("unsafe")));
  EXPECT_THAT(kPagePolicy, HasSubstr("frame-ancestors 'none'"));
  EXPECT_THAT(kReportPolicy, Not(HasSubstr("script-src")));
  EXPECT_THAT(kReportPolicy, HasSubstr("frame-ancestors 'self'"));
}

TEST(PagesTest, EscapeWhatTheyWrite) {
  const std::string hostile = "<script>alert(\"x\")</script>&'";
  const std::string signin = SignInPage(hostile);
  EXPECT_THAT(signin, Not(HasSubstr("<script>")));
  EXPECT_THAT(signin, HasSubstr("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"));
  EXPECT_THAT(signin, HasSubstr("<form method=\"post\" action=\"/signin\">"));

  Session session;
  session.name = hostile;
  session.role = ptxbench::v1::ROLE_READ;
  session.csrf = "\"><script>";
  session.token = "secret-token";
  session.id = "secret-id";
  const std::string page = AppPage(PageKind::kTrajectory, session);
  EXPECT_THAT(page, Not(HasSubstr("<script>")));
  EXPECT_THAT(page, Not(HasSubstr("secret-")));
  EXPECT_THAT(page, HasSubstr("<body data-page=\"trajectory\">"));
  EXPECT_THAT(page, HasSubstr("<meta name=\"ptxb-csrf\" content=\"&quot;&gt;&lt;script&gt;\">"));
  EXPECT_THAT(page, Not(HasSubstr("<script>"))) << "no inline script";
  EXPECT_THAT(page, Not(HasSubstr("style=")));
}

}  // namespace
}  // namespace ptxbench::dashboard
