// The HTML report in a real browser: headless Chromium loads a report of
// two experiments (one simulated, with a scripted model), every plot has a
// size on screen, and the console stays silent. The page under test is a
// copy of the product's with a probe script put in; the product itself has
// no script (html_test.cc checks that).
//
// Chromium logs every console message at INFO, whatever its level, so the
// test allows none but the probe's own: a console.error, an uncaught
// exception, a blocked script or a blocked fetch (the page's
// Content-Security-Policy) each fail it.

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "common/file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "results/report/html.h"
#include "results/report/testing/chromium.h"
#include "results/report/testing/markup.h"
#include "results/report/testing/sample_report.h"

namespace ptxbench::report {
namespace {

namespace fs = std::filesystem;

class ReportBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = testing::FindChromium();
    if (chromium_.empty()) {
      GTEST_SKIP() << "chromium is not installed (/usr/bin/chromium, or set PTXB_CHROMIUM): the "
                      "HTML report is not checked in a browser. scripts/setup.sh installs the "
                      "Debian package chromium.";
    }
    std::string dir = fs::temp_directory_path() / "ptxb_report_browser_XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    if (dir_.empty()) return;
    if (HasFailure()) {
      std::cerr << "kept for a look: " << dir_ << "\n";
    } else {
      fs::remove_all(dir_);
    }
  }

  std::string chromium_;
  std::string dir_;
};

TEST_F(ReportBrowserTest, EveryPlotHasASizeAndTheConsoleStaysSilent) {
  const std::string html = ReportHtml(testing::ComparisonReport());
  const int plots = testing::Occurrences(html, "<svg class=\"plot\"");
  ASSERT_EQ(plots, 7) << "pass@turn ×2, fast_p, speedups, outcomes per experiment ×2, cost";

  testing::ChromiumOptions options;
  options.binary = chromium_;
  options.work_dir = dir_;
  auto probe = testing::ProbePlots(html, options);
  ASSERT_TRUE(probe.ok()) << probe.status();

  // The console: the probe's line and nothing else.
  EXPECT_TRUE(probe->probe_logged) << "the probe's console line is not in chromium's log, so "
                                      "console errors would go unseen; the log:\n"
                                   << probe->page.log;
  EXPECT_THAT(probe->other_console, ::testing::IsEmpty())
      << "the page logged to the console:\n"
      << absl::StrJoin(probe->other_console, "\n");

  ASSERT_EQ(probe->plot_sizes.size(), static_cast<size_t>(plots)) << "sizes: " << probe->plots;
  EXPECT_THAT(testing::UnsizedPlots(*probe), ::testing::IsEmpty()) << "sizes: " << probe->plots;
  EXPECT_EQ(probe->scripts, "1") << "only the probe runs";
  EXPECT_EQ(probe->overflow, "false") << "the page is wider than the 1280px window";

  auto png = ReadFile(probe->page.screenshot_path);
  ASSERT_TRUE(png.ok()) << png.status();
  EXPECT_TRUE(absl::StartsWith(*png, "\x89PNG\r\n\x1a\n")) << "not a PNG";
  // PTXB_SCREENSHOT_OUT keeps the picture (scripts/report_screenshot.sh
  // refreshes docs/images/report.png with it).
  if (const char* out = std::getenv("PTXB_SCREENSHOT_OUT"); out != nullptr && *out != '\0') {
    fs::copy_file(probe->page.screenshot_path, out, fs::copy_options::overwrite_existing);
  }
}

TEST_F(ReportBrowserTest, AHungBrowserIsKilledAtTheDeadline) {
  const std::string page_path = dir_ + "/empty.html";
  ASSERT_TRUE(WriteFile(page_path, "<!DOCTYPE html><title>t</title>").ok());
  testing::ChromiumOptions options;
  options.binary = chromium_;
  options.work_dir = dir_;
  options.deadline = absl::Milliseconds(50);  // far too short to start
  EXPECT_EQ(testing::LoadPage(page_path, options).status().code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST(ChromiumLogTest, ConsoleLinesAreTheConsoleMessagesOfTheLog) {
  // Lines as Chromium 156 writes them (and an older CONSOLE(n) one).
  const std::string log =
      R"([1:2:1202/062536.403487:ERROR:dbus/bus.cc:405] Failed to connect to the bus
[1:1:1202/062539.116615:INFO:CONSOLE:2] "deliberate error", source: file:///tmp/a.html (2)
[1:1:1202/062539.116651:WARNING:ui/base/idle/idle_linux.cc:111] None of the known D-Bus services
[1:1:1202/062539.116676:INFO:CONSOLE(7)] "Uncaught ReferenceError: x is not defined", source: file:///tmp/a.html (7)
)";
  EXPECT_THAT(testing::ConsoleLines(log),
              ::testing::ElementsAre(::testing::HasSubstr("deliberate error"),
                                     ::testing::HasSubstr("Uncaught ReferenceError")));
}

TEST(ChromiumLogTest, TheProbeGoesBeforeThePolicy) {
  auto page = testing::InjectBeforePolicy(
      "<head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">", "<p>");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(
      *page,
      "<head><p><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">");
  EXPECT_EQ(testing::InjectBeforePolicy("<head>", "<p>").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace ptxbench::report
