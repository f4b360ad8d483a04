#ifndef PTXBENCH_TESTING_CDP_H_
#define PTXBENCH_TESTING_CDP_H_

// Headless Chromium driven over the Chrome DevTools Protocol, for browser
// tests of live pages (the dashboard's): navigate, run JavaScript, wait for
// a condition, type, read cookies, take a screenshot, and collect what the
// page reported (console messages, uncaught exceptions, Content-Security-
// Policy violations and failed loads).
//
// The protocol goes through Chromium's --remote-debugging-pipe: it reads
// commands on its descriptor 3 and writes replies and events on 4, each a
// JSON message ending in a NUL byte. Test-only; single-threaded (one test
// thread drives a browser).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "process/process.h"
#include "results/report/testing/chromium.h"

namespace ptxbench::testing {

class CdpBrowser {
 public:
  struct Options {
    // The binary (report::testing::FindChromium), its work folder (must
    // exist: profile, log, pipes) and window size.
    report::testing::ChromiumOptions chromium;
    // Appended to the headless flags, e.g. --ignore-certificate-errors.
    std::vector<std::string> extra_flags;
    // How long one command may wait for its reply.
    absl::Duration call_timeout = absl::Seconds(30);
  };

  // Starts Chromium. kFailedPrecondition when it cannot be started or does
  // not answer.
  static absl::StatusOr<std::unique_ptr<CdpBrowser>> Launch(const Options& options);
  // Closes the browser (Browser.close), and kills it if it lingers.
  ~CdpBrowser();
  CdpBrowser(const CdpBrowser&) = delete;
  CdpBrowser& operator=(const CdpBrowser&) = delete;

  // Sends `method` to the browser (session "") or to a page's session and
  // waits for the reply's result. A protocol error comes back as kInternal
  // naming the method; no reply in time as kDeadlineExceeded.
  absl::StatusOr<nlohmann::json> Call(const std::string& method,
                                      nlohmann::json params = nlohmann::json::object(),
                                      const std::string& session = "");
  // Reads messages until an event `method` of `session` arrives that was
  // not seen before `since` (an index into events()), or `timeout` passes.
  absl::StatusOr<nlohmann::json> WaitForEvent(const std::string& method,
                                              const std::string& session, size_t since,
                                              absl::Duration timeout);
  // Every event received so far, in order.
  const std::vector<nlohmann::json>& events() const { return events_; }
  // The end of Chromium's own output, for failure messages.
  std::string LogTail() const;

 private:
  CdpBrowser(process::Process process, int command_fd, int reply_fd, Options options);
  absl::Status Send(const nlohmann::json& message);
  // Reads and parses at most one message, waiting until `deadline`;
  // kDeadlineExceeded on time-out, kUnavailable when the browser is gone.
  absl::StatusOr<nlohmann::json> Receive(absl::Time deadline);

  process::Process process_;
  int command_fd_;
  int reply_fd_;
  Options options_;
  int next_id_ = 1;
  std::string buffer_;  // bytes read past the last whole message
  std::vector<nlohmann::json> events_;
};

// One tab of a CdpBrowser, attached in flat mode with the Page, Runtime, Log
// and Network domains on, so its console, exceptions and failed loads are
// recorded from the start.
class CdpPage {
 public:
  static absl::StatusOr<CdpPage> Open(CdpBrowser* browser);

  // Loads `url` and waits for its load event.
  absl::Status Navigate(const std::string& url, absl::Duration timeout = absl::Seconds(30));
  // The value of a JavaScript expression (awaited when a promise); an
  // exception comes back as kInternal with its text.
  absl::StatusOr<nlohmann::json> Evaluate(const std::string& expression);
  // Evaluates `condition` every 100 ms until it is true; kDeadlineExceeded
  // with the last value of `describe` (an expression) when it never is.
  absl::Status WaitFor(const std::string& condition, absl::Duration timeout,
                       const std::string& describe = "document.body && document.body.innerText");
  // Types `text` into the focused element, as a keyboard would.
  absl::Status InsertText(const std::string& text);
  // A PNG of the page: the window, or the whole page when `full_page`.
  absl::Status Screenshot(const std::string& png_path, bool full_page = false);
  // What the page reported that a quiet page never does, one line each:
  // uncaught exceptions, console errors, warnings and assertions, and log
  // entries of level error or warning (Content-Security-Policy violations,
  // failed loads and other browser complaints), each with its URL.
  std::vector<std::string> Problems() const;

  const std::string& session() const { return session_; }

 private:
  CdpPage(CdpBrowser* browser, std::string target, std::string session)
      : browser_(browser), target_(std::move(target)), session_(std::move(session)) {}

  CdpBrowser* browser_;
  std::string target_;
  std::string session_;
};

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_CDP_H_
