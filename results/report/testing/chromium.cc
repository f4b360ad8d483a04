#include "results/report/testing/chromium.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "process/run.h"

namespace ptxbench::report::testing {
namespace {

std::string Tail(const std::string& text, size_t n) {
  return text.size() <= n ? text : "…" + text.substr(text.size() - n);
}

// Runs once the DOM is parsed: measures every plot (getBoundingClientRect
// lays the page out first) and writes the sizes where --dump-dom shows them,
// then logs one known line.
constexpr char kProbe[] = R"(<script>
document.addEventListener('DOMContentLoaded', () => {
  const root = document.documentElement;
  const sizes = [...document.querySelectorAll('svg.plot')].map((svg) => {
    const r = svg.getBoundingClientRect();
    return Math.round(r.width) + 'x' + Math.round(r.height);
  });
  root.setAttribute('data-probe-plots', sizes.join(' '));
  root.setAttribute('data-probe-scripts', String(document.scripts.length));
  root.setAttribute('data-probe-overflow', String(root.scrollWidth > window.innerWidth));
  console.log('ptxb-probe-done');
});
</script>
)";
constexpr char kProbeLine[] = "\"ptxb-probe-done\"";

// The value of attribute `name` on the dumped <html> element.
std::string ProbeAttribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("<html[^>]* " + name + "=\"([^\"]*)\""))) {
    return "<missing>";
  }
  return m[1];
}

}  // namespace

std::string FindChromium() {
  const char* env = std::getenv("PTXB_CHROMIUM");
  std::string path = env != nullptr && *env != '\0' ? env : "/usr/bin/chromium";
  return access(path.c_str(), X_OK) == 0 ? path : "";
}

std::vector<std::string> HeadlessFlags(const ChromiumOptions& options) {
  return {
      "--headless",
      // As root Chromium refuses to start sandboxed; the page is our own.
      "--no-sandbox",
      "--disable-gpu",
      // Containers often have a 64 MB /dev/shm, too small for a renderer.
      "--disable-dev-shm-usage",
      // A fresh profile per run: nothing from a user's browser, nothing kept.
      "--user-data-dir=" + options.work_dir + "/profile",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-extensions",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--hide-scrollbars",
      "--force-device-scale-factor=1",
      absl::StrCat("--window-size=", options.window_width, ",", options.window_height),
  };
}

absl::StatusOr<ChromiumPage> LoadPage(const std::string& html_path,
                                      const ChromiumOptions& options) {
  const std::string log_path = options.work_dir + "/chromium.log";
  const std::string screenshot = options.work_dir + "/screenshot.png";
  process::RunOptions run;
  run.argv = HeadlessFlags(options);
  run.argv.insert(run.argv.begin(), options.binary);
  // The log goes to a file of its own, so the console lines never mix with
  // the DOM on stdout.
  run.argv.insert(run.argv.end(), {"--enable-logging", "--log-file=" + log_path, "--v=0",
                                   "--screenshot=" + screenshot, "--dump-dom",
                                   "file://" + std::filesystem::absolute(html_path).string()});
  run.deadline = options.deadline;
  run.max_output_bytes = 16 << 20;
  PTXB_ASSIGN_OR_RETURN(process::RunResult result, process::Run(run));
  ChromiumPage page;
  page.output = std::move(result.output);
  if (auto log = ReadFile(log_path); log.ok()) page.log = *std::move(log);
  if (result.timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat("chromium ran past ", absl::FormatDuration(options.deadline), " loading ",
                     html_path, "; its log ends: ", Tail(page.log, 2000)));
  }
  if (!result.ok() || !std::filesystem::exists(screenshot)) {
    return absl::InternalError(absl::StrCat(
        "chromium ", result.Describe(), " loading ", html_path,
        " (screenshot written: ", std::filesystem::exists(screenshot),
        "); output ends: ", Tail(page.output, 2000), "; log ends: ", Tail(page.log, 2000)));
  }
  page.console = ConsoleLines(page.log);
  page.screenshot_path = screenshot;
  return page;
}

std::vector<std::string> ConsoleLines(absl::string_view log) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, ":CONSOLE:") || absl::StrContains(line, ":CONSOLE(")) {
      lines.emplace_back(line);
    }
  }
  return lines;
}

absl::StatusOr<std::string> InjectBeforePolicy(absl::string_view html, absl::string_view script) {
  size_t at = html.find("<meta http-equiv=\"Content-Security-Policy\"");
  if (at == absl::string_view::npos) {
    return absl::FailedPreconditionError("the page declares no Content-Security-Policy <meta>");
  }
  return absl::StrCat(html.substr(0, at), script, html.substr(at));
}

absl::StatusOr<PlotProbe> ProbePlots(absl::string_view html, const ChromiumOptions& options) {
  PTXB_ASSIGN_OR_RETURN(std::string probed, InjectBeforePolicy(html, kProbe));
  const std::string path = options.work_dir + "/probed.html";
  PTXB_RETURN_IF_ERROR(WriteFile(path, probed));
  PlotProbe probe;
  PTXB_ASSIGN_OR_RETURN(probe.page, LoadPage(path, options));
  for (const std::string& line : probe.page.console) {
    if (absl::StrContains(line, kProbeLine)) {
      probe.probe_logged = true;
    } else {
      probe.other_console.push_back(line);
    }
  }
  probe.plots = ProbeAttribute(probe.page.output, "data-probe-plots");
  probe.plot_sizes = absl::StrSplit(probe.plots, ' ', absl::SkipEmpty());
  probe.scripts = ProbeAttribute(probe.page.output, "data-probe-scripts");
  probe.overflow = ProbeAttribute(probe.page.output, "data-probe-overflow");
  return probe;
}

std::vector<std::string> UnsizedPlots(const PlotProbe& probe) {
  std::vector<std::string> out;
  for (const std::string& size : probe.plot_sizes) {
    std::vector<std::string> wh = absl::StrSplit(size, 'x');
    int width = 0, height = 0;
    if (wh.size() != 2 || !absl::SimpleAtoi(wh[0], &width) || !absl::SimpleAtoi(wh[1], &height) ||
        width <= 0 || height <= 0) {
      out.push_back(size);
    }
  }
  return out;
}

}  // namespace ptxbench::report::testing
