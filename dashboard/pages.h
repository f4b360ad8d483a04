#ifndef PTXBENCH_DASHBOARD_PAGES_H_
#define PTXBENCH_DASHBOARD_PAGES_H_

// The HTML documents the dashboard serves. The pages carry no data: each is
// a frame (header, navigation, sign-out) that the dashboard's script fills
// from the JSON API and keeps up to date (dashboard/web/app.js), so the only
// texts written here are the signed-in user's name and the sign-in page's
// message, both escaped. Scripts and styles are files of the dashboard
// (assets.h): the pages' Content-Security-Policy allows nothing inline.

#include <string>

#include "absl/strings/string_view.h"
#include "dashboard/session_store.h"

namespace ptxbench::dashboard {

// What a page shows; app.js reads it from <body data-page>.
enum class PageKind { kExperiments, kExperiment, kTrajectory, kExecutors };

// The sign-in form, with `message` (why the last attempt failed, or empty).
std::string SignInPage(absl::string_view message);

// A page of the signed-in `session`. It carries the session's CSRF token
// (a <meta> the script sends back, a field of the sign-out form), never its
// id or token.
std::string AppPage(PageKind kind, const Session& session);

}  // namespace ptxbench::dashboard

#endif  // PTXBENCH_DASHBOARD_PAGES_H_
