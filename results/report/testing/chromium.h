#ifndef PTXBENCH_RESULTS_REPORT_TESTING_CHROMIUM_H_
#define PTXBENCH_RESULTS_REPORT_TESTING_CHROMIUM_H_

// Headless Chromium (the Debian package `chromium`) for the HTML report's
// browser tests: one run loads a page from a file and gives back its DOM once
// loaded (--dump-dom), the page's console messages (from Chromium's log) and
// a screenshot; ProbePlots measures a report's plots on screen. Test-only: it
// trusts the page it loads.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxbench::report::testing {

// $PTXB_CHROMIUM, else /usr/bin/chromium; empty when it is not executable.
std::string FindChromium();

struct ChromiumOptions {
  std::string binary;
  // Holds the throwaway profile, the log and the screenshot; must exist.
  std::string work_dir;
  // A laptop's width; the height is what the screenshot shows.
  int window_width = 1280;
  int window_height = 1400;
  // A browser that hangs is killed (with its whole process group; its
  // crash handlers, in sessions of their own, end with it) and the load
  // fails, instead of hanging the test.
  absl::Duration deadline = absl::Seconds(60);
};

// The flags of every headless run of ours (a fresh profile in
// options.work_dir, no sandbox as root, nothing fetched in the background,
// the window's size): LoadPage adds what to load and dump, testing/cdp.h
// the DevTools pipe.
std::vector<std::string> HeadlessFlags(const ChromiumOptions& options);

struct ChromiumPage {
  // Chromium's stdout and stderr: the DOM after load, amid its own logging.
  std::string output;
  // The page's console messages, one line each (ConsoleLines of the log).
  std::vector<std::string> console;
  std::string log;              // Chromium's whole log, for failure messages
  std::string screenshot_path;  // a PNG of the window
};

// Loads `html_path` and waits for Chromium to exit. kDeadlineExceeded when
// it ran past the deadline; kInternal, with the end of its output, when it
// failed or wrote no screenshot.
absl::StatusOr<ChromiumPage> LoadPage(const std::string& html_path, const ChromiumOptions& options);

// The console messages in a Chromium log. Chromium logs each one (any level:
// log, warning, error, an uncaught exception, a Content-Security-Policy
// violation) as `[pid:tid:time:INFO:CONSOLE:12] "text", source: URL (12)`
// (Chromium 156; before, `INFO:CONSOLE(12)]`); the level of the message is
// not in the line, so a page that must stay quiet must log nothing at all.
std::vector<std::string> ConsoleLines(absl::string_view log);

// `html` with `script` inserted just before its Content-Security-Policy
// <meta>: a policy set by <meta> governs only what follows it, so the
// probe runs while the page keeps its policy. kFailedPrecondition when the
// page declares no policy.
absl::StatusOr<std::string> InjectBeforePolicy(absl::string_view html, absl::string_view script);

// What ProbePlots saw of a page once its DOM was parsed.
struct PlotProbe {
  ChromiumPage page;
  // "WxH", in CSS pixels, of every `svg.plot` in page order; the values
  // as the probe wrote them ("<missing>" when it did not run).
  std::vector<std::string> plot_sizes;
  std::string plots;     // the same, separated by spaces
  std::string scripts;   // how many <script> elements the page has, the probe's included
  std::string overflow;  // "true" when the page is wider than the window
  // The probe's own console line is in the log: proof that console
  // messages are seen at all.
  bool probe_logged = false;
  // Every other console message: a page that must stay quiet has none.
  std::vector<std::string> other_console;
};

// Writes `html` with a probe script put in before its policy
// (InjectBeforePolicy) to options.work_dir/probed.html, and loads it. The
// probe lays the page out, measures each plot and logs one line. Chromium
// logs every console message at INFO, whatever its level, so any other line
// (a console.error, an uncaught exception, a script or fetch the page's
// Content-Security-Policy blocked) is in other_console.
absl::StatusOr<PlotProbe> ProbePlots(absl::string_view html, const ChromiumOptions& options);

// The plot sizes that are not a positive width and height ("0x120", or one
// that is not "WxH"): plots that do not show.
std::vector<std::string> UnsizedPlots(const PlotProbe& probe);

}  // namespace ptxbench::report::testing

#endif  // PTXBENCH_RESULTS_REPORT_TESTING_CHROMIUM_H_
