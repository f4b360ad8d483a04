#include "dashboard/web_security.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ptxbench::dashboard {
namespace {

std::string CookieAttributes(absl::Duration max_age, bool secure) {
  return absl::StrCat("; Max-Age=", absl::ToInt64Seconds(max_age),
                      "; Path=/; HttpOnly; SameSite=Strict", secure ? "; Secure" : "");
}

}  // namespace

std::string SessionCookie(absl::string_view id, absl::Duration max_age, bool secure) {
  return absl::StrCat(kSessionCookie, "=", id, CookieAttributes(max_age, secure));
}

std::string ClearedSessionCookie(bool secure) {
  return absl::StrCat(kSessionCookie, "=", CookieAttributes(absl::ZeroDuration(), secure));
}

std::string CookieValue(absl::string_view cookie_header, absl::string_view name) {
  for (absl::string_view pair : absl::StrSplit(cookie_header, ';')) {
    pair = absl::StripAsciiWhitespace(pair);
    const size_t eq = pair.find('=');
    if (eq != absl::string_view::npos && pair.substr(0, eq) == name) {
      return std::string(pair.substr(eq + 1));
    }
  }
  return "";
}

bool SameOriginRequest(absl::string_view sec_fetch_site, absl::string_view origin,
                       absl::string_view scheme, absl::string_view host) {
  if (!sec_fetch_site.empty()) return sec_fetch_site == "same-origin";
  if (!origin.empty()) return origin == absl::StrCat(scheme, "://", host);
  return true;
}

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

}  // namespace ptxbench::dashboard
