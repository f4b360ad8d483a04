// testing/cdp against a page that misbehaves on purpose: what the dashboard's
// browser test counts as "quiet" must see each kind of complaint.
#include "testing/cdp.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_join.h"
#include "common/file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kNoisyPage[] = R"(<!DOCTYPE html>
<html><head>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self'">
<script src="noisy.js"></script>
</head><body><p id="p">ready</p>
<script>document.title = 'inline ran';</script>
</body></html>
)";
constexpr char kNoisyScript[] = R"(
console.error('an error on purpose');
setTimeout(() => { throw new Error('thrown on purpose'); }, 0);
)";

TEST(CdpTest, SeesConsoleErrorsExceptionsAndPolicyViolations) {
  report::testing::ChromiumOptions chromium;
  chromium.binary = report::testing::FindChromium();
  if (chromium.binary.empty()) GTEST_SKIP() << "no chromium (the Debian package, or $PTXB_CHROMIUM)";
  chromium.work_dir = ::testing::TempDir() + "/cdp_test_" + std::to_string(getpid());
  std::filesystem::remove_all(chromium.work_dir);
  std::filesystem::create_directories(chromium.work_dir);
  ASSERT_TRUE(WriteFile(chromium.work_dir + "/noisy.html", kNoisyPage).ok());
  ASSERT_TRUE(WriteFile(chromium.work_dir + "/noisy.js", kNoisyScript).ok());

  auto browser = CdpBrowser::Launch({chromium, {"--allow-file-access-from-files"}});
  ASSERT_TRUE(browser.ok()) << browser.status();
  auto page = CdpPage::Open(browser->get());
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_TRUE(page->Navigate("file://" + chromium.work_dir + "/noisy.html").ok());
  EXPECT_EQ(page->Evaluate("document.getElementById('p').textContent").value_or(nullptr), "ready");
  EXPECT_NE(page->Evaluate("document.title").value_or(nullptr), "inline ran")
      << "the policy blocked the inline script";
  ASSERT_TRUE(page->WaitFor("true", absl::Seconds(1)).ok());
  EXPECT_EQ(page->WaitFor("false", absl::Milliseconds(300)).code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(page->Evaluate("null.x").status().code(), absl::StatusCode::kInternal);

  const std::vector<std::string> problems = page->Problems();
  const std::string all = absl::StrJoin(problems, "\n");
  EXPECT_THAT(all, HasSubstr("console.error: an error on purpose")) << all;
  EXPECT_THAT(all, HasSubstr("thrown on purpose")) << all;
  EXPECT_THAT(all, HasSubstr("Content Security Policy")) << all;

  const std::string png = chromium.work_dir + "/shot.png";
  ASSERT_TRUE(page->Screenshot(png).ok());
  EXPECT_EQ(ReadFile(png).value_or("").substr(1, 3), "PNG");
  std::filesystem::remove_all(chromium.work_dir);
}

}  // namespace
}  // namespace ptxbench::testing
