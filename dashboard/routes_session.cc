// Routes: sign-in, sign-out, the session gate and the pages.
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "auth/token.h"
#include "common/log.h"
#include "dashboard/routes.h"
#include "dashboard/web_security.h"
#include "nlohmann/json.hpp"

namespace ptxbench::dashboard {

namespace v1 = ::ptxbench::v1;

namespace {

constexpr char kHtml[] = "text/html; charset=utf-8";
// Longer than any token the scheduler makes; a bound on what is kept.
constexpr size_t kMaxTokenBytes = 1024;

// A token is sent as gRPC metadata, which takes printable ASCII only.
bool PlausibleToken(const std::string& token) {
  if (token.empty() || token.size() > kMaxTokenBytes) return false;
  for (char c : token) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

std::string FormField(const httplib::Request& req, const std::string& name) {
  httplib::Params form;
  httplib::detail::parse_query_text(req.body, form);
  auto it = form.find(name);
  return it == form.end() ? "" : it->second;
}

void SignInRefused(int status, absl::string_view message, const httplib::Request& req,
                   absl::string_view why, httplib::Response& res) {
  LogWarning("dashboard sign-in refused", {{"remote", req.remote_addr}, {"why", std::string(why)}});
  res.status = status;
  res.set_content(SignInPage(message), kHtml);
}

}  // namespace

void JsonError(int http_status, const absl::Status& status, httplib::Response& res) {
  nlohmann::json body = {{"error", status.ToString()},
                         {"code", absl::StatusCodeToString(status.code())}};
  res.status = http_status;
  res.set_content(body.dump(), "application/json");
}

void Routes::AddSecurityHeaders(const httplib::Request&, httplib::Response& res) {
  if (!res.has_header("Content-Security-Policy")) {
    res.set_header("Content-Security-Policy", kPagePolicy);
    res.set_header("X-Frame-Options", "DENY");
  }
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cross-Origin-Opener-Policy", "same-origin");
  res.set_header("Cross-Origin-Resource-Policy", "same-origin");
  // Pages and data are a session's: no cache keeps them after sign-out.
  res.set_header("Cache-Control", "no-store");
}

std::optional<Session> Routes::SessionOf(const httplib::Request& req, httplib::Response& res,
                                         Kind kind) {
  std::optional<Session> session =
      sessions_->Find(CookieValue(req.get_header_value("Cookie"), kSessionCookie));
  if (session) return session;
  if (kind == Kind::kPage) {
    res.set_redirect("/signin", 303);
  } else {
    JsonError(401, absl::UnauthenticatedError("not signed in (or the session ended)"), res);
  }
  return std::nullopt;
}

bool Routes::CheckStateChange(const httplib::Request& req, const Session& session,
                              const std::string& token, httplib::Response& res) {
  if (SameOriginRequest(req.get_header_value("Sec-Fetch-Site"), req.get_header_value("Origin"),
                        scheme_, req.get_header_value("Host")) &&
      SecretsEqual(token, session.csrf)) {
    return true;
  }
  LogWarning("dashboard request refused: not from its own pages",
             {{"remote", req.remote_addr}, {"path", req.path}, {"name", session.name}});
  JsonError(403, absl::PermissionDeniedError("refused: the request did not come from the "
                                             "dashboard's own page (CSRF check)"),
            res);
  return false;
}

void Routes::Failed(const absl::Status& status, const Session& session, Kind kind,
                    httplib::Response& res) {
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    // Revoked or expired on the scheduler's side: this session is over.
    sessions_->Remove(session.id);
    if (kind == Kind::kPage) {
      res.set_redirect("/signin", 303);
      return;
    }
  }
  if (kind == Kind::kPage) {
    res.status = HttpStatusOf(status.code());
    res.set_content(status.ToString(), "text/plain; charset=utf-8");
    return;
  }
  JsonError(HttpStatusOf(status.code()), status, res);
}

void Routes::SignInForm(const httplib::Request& req, httplib::Response& res) {
  if (sessions_->Find(CookieValue(req.get_header_value("Cookie"), kSessionCookie))) {
    res.set_redirect("/", 303);
    return;
  }
  res.set_content(SignInPage(""), kHtml);
}

void Routes::SignIn(const httplib::Request& req, httplib::Response& res) {
  // A page of another site must not sign a browser in under its token.
  if (!SameOriginRequest(req.get_header_value("Sec-Fetch-Site"), req.get_header_value("Origin"),
                         scheme_, req.get_header_value("Host"))) {
    return SignInRefused(403, "Sign in from this page.", req, "cross-site", res);
  }
  const std::string token(absl::StripAsciiWhitespace(FormField(req, "token")));
  if (!PlausibleToken(token)) {
    return SignInRefused(400, "That is not a token: paste the token itself.", req, "malformed",
                         res);
  }
  absl::StatusOr<v1::WhoAmIResponse> who =
      calls_->Call(token, &SchedulerCalls::Stub::WhoAmI, v1::WhoAmIRequest());
  if (!who.ok()) {
    if (who.status().code() == absl::StatusCode::kUnauthenticated) {
      return SignInRefused(401, "The scheduler does not know this token (or it was revoked).",
                           req, "unknown token", res);
    }
    return SignInRefused(HttpStatusOf(who.status().code()),
                         absl::StrCat("The scheduler could not check the token: ",
                                      who.status().ToString()),
                         req, absl::StatusCodeToString(who.status().code()), res);
  }
  if (who->role() != v1::ROLE_READ && who->role() != v1::ROLE_SUBMIT &&
      who->role() != v1::ROLE_ADMIN) {
    return SignInRefused(
        403,
        absl::StrCat("A token of role ", auth::RoleName(who->role()),
                     " cannot sign in: use one of role read, submit or admin."),
        req, auth::RoleName(who->role()), res);
  }
  Session session = sessions_->Create(token, who->name(), who->role());
  LogInfo("dashboard sign-in", {{"name", session.name},
                                {"role", auth::RoleName(session.role)},
                                {"remote", req.remote_addr}});
  res.set_header("Set-Cookie", SessionCookie(session.id, session_ttl_, secure_cookie_));
  res.set_redirect("/", 303);
}

void Routes::SignOut(const httplib::Request& req, httplib::Response& res) {
  std::optional<Session> session = SessionOf(req, res, Kind::kPage);
  if (!session) return;
  if (!CheckStateChange(req, *session, FormField(req, "csrf"), res)) return;
  sessions_->Remove(session->id);
  LogInfo("dashboard sign-out", {{"name", session->name}, {"remote", req.remote_addr}});
  res.set_header("Set-Cookie", ClearedSessionCookie(secure_cookie_));
  res.set_redirect("/signin", 303);
}

void Routes::Page(PageKind kind, const httplib::Request& req, httplib::Response& res) {
  std::optional<Session> session = SessionOf(req, res, Kind::kPage);
  if (!session) return;
  res.set_content(AppPage(kind, *session), kHtml);
}

}  // namespace ptxbench::dashboard
