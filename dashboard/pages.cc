#include "dashboard/pages.h"

#include "absl/strings/str_cat.h"
#include "auth/token.h"
#include "results/report/svg.h"

namespace ptxbench::dashboard {
namespace {

using report::EscapeHtml;

std::string Head(absl::string_view title) {
  return absl::StrCat(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>)",
                      title, R"( · ptxbench</title>
<link rel="icon" href="/static/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/style.css">
)");
}

const char* PageName(PageKind kind) {
  switch (kind) {
    case PageKind::kExperiments:
      return "experiments";
    case PageKind::kExperiment:
      return "experiment";
    case PageKind::kTrajectory:
      return "trajectory";
    case PageKind::kExecutors:
      return "executors";
  }
  return "experiments";
}

// The frame of every page of a session: brand, navigation, who is signed
// in, sign-out; `main` inside.
std::string Framed(absl::string_view page, const Session& session, absl::string_view main) {
  const std::string csrf = EscapeHtml(session.csrf);
  return absl::StrCat(Head("Dashboard"), "<meta name=\"ptxb-csrf\" content=\"", csrf, R"(">
<script src="/static/app.js" defer></script>
</head>
<body data-page=")",
                      page, R"(">
<header class="top">
<a class="brand" href="/">ptxbench</a>
<nav><a href="/">Experiments</a><a href="/executors">Executors</a></nav>
<span class="who">)",
                      EscapeHtml(session.name), " · ", auth::RoleName(session.role), R"(</span>
<form method="post" action="/signout"><input type="hidden" name="csrf" value=")",
                      csrf, R"("><button type="submit">Sign out</button></form>
</header>
<main id="main">)",
                      main, R"(</main>
<footer><span id="updated"></span></footer>
</body>
</html>
)");
}

}  // namespace

std::string SignInPage(absl::string_view message) {
  std::string note;
  if (!message.empty()) {
    note = absl::StrCat("<p class=\"error\" role=\"alert\">", EscapeHtml(message), "</p>\n");
  }
  return absl::StrCat(Head("Sign in"), R"(</head>
<body class="signin">
<main>
<h1>ptxbench</h1>
<p>Sign in with a token of role <code>read</code>, <code>submit</code> or <code>admin</code>
(<code>ptxbench token create --role read</code>).</p>
)",
                      note, R"(<form method="post" action="/signin">
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>
)");
}

std::string AppPage(PageKind kind, const Session& session) {
  return Framed(PageName(kind), session, "<p class=\"status\" id=\"status\">Loading…</p>");
}

}  // namespace ptxbench::dashboard
