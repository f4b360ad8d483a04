#ifndef PTXBENCH_DASHBOARD_WEB_SECURITY_H_
#define PTXBENCH_DASHBOARD_WEB_SECURITY_H_

// The browser-facing rules of the dashboard, as pure functions so they are
// tested without a server: the session cookie's attributes, reading a cookie
// back, which requests count as coming from the dashboard's own pages, the
// Content-Security-Policy of each kind of page, and the HTTP status a
// scheduler error becomes.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxbench::dashboard {

inline constexpr char kSessionCookie[] = "ptxb_session";

// Set-Cookie for a new session: HttpOnly (no script reads it), SameSite=
// Strict (no other site's page makes the browser send it), Path=/, and
// Secure unless `secure` is false (plain HTTP on a non-loopback address,
// which only --insecure allows: a browser would not send a Secure cookie
// back there).
std::string SessionCookie(absl::string_view id, absl::Duration max_age, bool secure);
// Set-Cookie that makes the browser forget the session.
std::string ClearedSessionCookie(bool secure);

// The value of cookie `name` in a Cookie request header; "" when absent.
std::string CookieValue(absl::string_view cookie_header, absl::string_view name);

// Whether a state-changing request may have come from the dashboard's own
// pages, by the headers browsers add: Sec-Fetch-Site, when present, must be
// "same-origin"; else Origin, when present, must be `scheme://host` (host
// as in the Host header). A request with neither (not from a browser, or a
// very old one) passes: the session's CSRF token still guards it.
bool SameOriginRequest(absl::string_view sec_fetch_site, absl::string_view origin,
                       absl::string_view scheme, absl::string_view host);

// The dashboard's own pages: scripts and styles only from the dashboard
// (never inline), data only from its JSON API, frames only its report pages,
// forms only to itself, and no other site may frame it.
inline constexpr char kPagePolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'";
// The report page (report::ReportHtml), shown in a frame of the dashboard:
// its inline styles and SVG, nothing else; only the dashboard may frame it.
inline constexpr char kReportPolicy[] =
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'self'";

// The HTTP status that answers a scheduler call failing with `code`
// (PERMISSION_DENIED -> 403, UNAUTHENTICATED -> 401, NOT_FOUND -> 404, ...).
int HttpStatusOf(absl::StatusCode code);

}  // namespace ptxbench::dashboard

#endif  // PTXBENCH_DASHBOARD_WEB_SECURITY_H_
