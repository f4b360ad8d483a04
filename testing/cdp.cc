#include "testing/cdp.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "testing/child_process.h"

namespace ptxbench::testing {
namespace {

using Json = nlohmann::json;

// process::Process gives a child no descriptor of ours but its output, so
// the DevTools pipe is two named pipes that a shell opens as descriptors 3
// and 4 before it becomes Chromium.
constexpr char kOpenPipesThenExec[] = R"(exec 3<"$1" 4>"$2"; shift 2; exec "$@")";

std::string Describe(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CdpBrowser>> CdpBrowser::Launch(const Options& options) {
  const std::string dir = options.chromium.work_dir;
  const std::string commands = dir + "/cdp.commands", replies = dir + "/cdp.replies";
  for (const std::string& fifo : {commands, replies}) {
    std::filesystem::remove(fifo);
    if (mkfifo(fifo.c_str(), 0600) != 0) {
      return absl::FailedPreconditionError(absl::StrCat("mkfifo ", fifo, ": ", strerror(errno)));
    }
  }
  // Opened here first, so the shell's opens do not wait: the reply pipe
  // for reading (without blocking: nobody writes yet), the command pipe
  // for reading and writing (so it has a reader at once).
  const int reply_fd = open(replies.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  const int command_fd = open(commands.c_str(), O_RDWR | O_CLOEXEC);
  if (reply_fd < 0 || command_fd < 0) {
    if (reply_fd >= 0) close(reply_fd);
    if (command_fd >= 0) close(command_fd);
    return absl::FailedPreconditionError(absl::StrCat("cannot open the DevTools pipes in ", dir));
  }
  process::SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", kOpenPipesThenExec, "sh", commands, replies,
                options.chromium.binary};
  for (std::string& flag : report::testing::HeadlessFlags(options.chromium)) {
    spawn.argv.push_back(std::move(flag));
  }
  spawn.argv.push_back("--remote-debugging-pipe");
  spawn.argv.insert(spawn.argv.end(), options.extra_flags.begin(), options.extra_flags.end());
  spawn.argv.push_back("about:blank");
  const int log_fd = open((dir + "/chromium.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  spawn.output = process::SpawnOptions::Output::kDescriptor;
  spawn.output_fd = log_fd;
  absl::StatusOr<process::Process> child = process::Process::Spawn(spawn);
  if (log_fd >= 0) close(log_fd);
  if (!child.ok()) {
    close(reply_fd);
    close(command_fd);
    return absl::FailedPreconditionError(absl::StrCat("cannot start chromium: ", child.status().message()));
  }
  std::unique_ptr<CdpBrowser> browser(
      new CdpBrowser(*std::move(child), command_fd, reply_fd, options));
  absl::StatusOr<Json> version = browser->Call("Browser.getVersion");
  if (!version.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "chromium does not answer on its DevTools pipe: ", version.status().message(),
        "; its output ends: ", browser->LogTail()));
  }
  return browser;
}

CdpBrowser::CdpBrowser(process::Process process, int command_fd, int reply_fd, Options options)
    : process_(std::move(process)),
      command_fd_(command_fd),
      reply_fd_(reply_fd),
      options_(std::move(options)) {}

CdpBrowser::~CdpBrowser() {
  if (process_.running() && !process_.Ended()) {
    options_.call_timeout = absl::Seconds(5);
    (void)Call("Browser.close");
    for (int i = 0; i < 50 && !process_.Ended(); ++i) absl::SleepFor(absl::Milliseconds(100));
  }
  process_.Kill();
  close(command_fd_);
  close(reply_fd_);
}

std::string CdpBrowser::LogTail() const {
  return Tail(options_.chromium.work_dir + "/chromium.log", 20);
}

absl::Status CdpBrowser::Send(const Json& message) {
  std::string bytes = message.dump();
  bytes.push_back('\0');
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(command_fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError(absl::StrCat("writing to chromium: ", strerror(errno)));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<Json> CdpBrowser::Receive(absl::Time deadline) {
  while (true) {
    const size_t end = buffer_.find('\0');
    if (end != std::string::npos) {
      Json message = Json::parse(buffer_.substr(0, end), nullptr, /*allow_exceptions=*/false);
      buffer_.erase(0, end + 1);
      if (message.is_discarded()) return absl::InternalError("chromium sent a message that is not JSON");
      return message;
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return absl::DeadlineExceededError("no message from chromium");
    pollfd p{reply_fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno != EINTR) return absl::InternalError(strerror(errno));
    if (ready <= 0) continue;
    char chunk[1 << 16];
    const ssize_t n = read(reply_fd_, chunk, sizeof(chunk));
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n == 0 && process_.Ended()) return absl::UnavailableError("chromium has exited");
    if (n == 0) {
      // No writer yet (the shell has not opened the pipe): wait a little.
      absl::SleepFor(absl::Milliseconds(10));
      continue;
    }
    if (n < 0) return absl::InternalError(absl::StrCat("reading from chromium: ", strerror(errno)));
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

absl::StatusOr<Json> CdpBrowser::Call(const std::string& method, Json params,
                                      const std::string& session) {
  const int id = next_id_++;
  Json message = {{"id", id}, {"method", method}, {"params", std::move(params)}};
  if (!session.empty()) message["sessionId"] = session;
  PTXB_RETURN_IF_ERROR(Send(message));
  const absl::Time deadline = absl::Now() + options_.call_timeout;
  while (true) {
    absl::StatusOr<Json> reply = Receive(deadline);
    if (!reply.ok()) {
      return absl::Status(reply.status().code(),
                          absl::StrCat(method, ": ", reply.status().message()));
    }
    if (!reply->contains("id")) {
      events_.push_back(*std::move(reply));
      continue;
    }
    if ((*reply)["id"] != id) continue;  // the reply to a call given up on
    if (reply->contains("error")) {
      return absl::InternalError(absl::StrCat(method, ": ", (*reply)["error"].dump()));
    }
    return (*reply)["result"];
  }
}

absl::StatusOr<Json> CdpBrowser::WaitForEvent(const std::string& method, const std::string& session,
                                              size_t since, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (size_t i = since;; ++i) {
    while (i >= events_.size()) {
      absl::StatusOr<Json> message = Receive(deadline);
      if (!message.ok()) {
        return absl::Status(message.status().code(),
                            absl::StrCat("waiting for ", method, ": ", message.status().message()));
      }
      if (!message->contains("id")) events_.push_back(*std::move(message));
    }
    const Json& event = events_[i];
    if (event.value("method", "") == method && event.value("sessionId", "") == session) return event;
  }
}

absl::StatusOr<CdpPage> CdpPage::Open(CdpBrowser* browser) {
  PTXB_ASSIGN_OR_RETURN(Json target, browser->Call("Target.createTarget", {{"url", "about:blank"}}));
  const std::string target_id = target["targetId"];
  PTXB_ASSIGN_OR_RETURN(Json attached, browser->Call("Target.attachToTarget",
                                                     {{"targetId", target_id}, {"flatten", true}}));
  CdpPage page(browser, target_id, attached["sessionId"]);
  for (const char* domain : {"Page", "Runtime", "Log", "Network"}) {
    PTXB_RETURN_IF_ERROR(
        browser->Call(absl::StrCat(domain, ".enable"), Json::object(), page.session_).status());
  }
  return page;
}

absl::Status CdpPage::Navigate(const std::string& url, absl::Duration timeout) {
  const size_t since = browser_->events().size();
  PTXB_ASSIGN_OR_RETURN(Json result, browser_->Call("Page.navigate", {{"url", url}}, session_));
  if (result.contains("errorText")) {
    return absl::UnavailableError(absl::StrCat("loading ", url, ": ", Describe(result["errorText"])));
  }
  return browser_->WaitForEvent("Page.loadEventFired", session_, since, timeout).status();
}

absl::StatusOr<Json> CdpPage::Evaluate(const std::string& expression) {
  PTXB_ASSIGN_OR_RETURN(Json result,
                        browser_->Call("Runtime.evaluate",
                                       {{"expression", expression},
                                        {"returnByValue", true},
                                        {"awaitPromise", true}},
                                       session_));
  if (result.contains("exceptionDetails")) {
    const Json& details = result["exceptionDetails"];
    return absl::InternalError(absl::StrCat(
        "evaluating ", expression, ": ",
        details.contains("exception") ? Describe(details["exception"].value("description", Json()))
                                      : Describe(details.value("text", Json()))));
  }
  return result["result"].value("value", Json());
}

absl::Status CdpPage::WaitFor(const std::string& condition, absl::Duration timeout,
                              const std::string& describe) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<Json> value = Evaluate(absl::StrCat("!!(", condition, ")"));
    // A page between two documents (a form just sent) has no context for a
    // moment: that is not an answer yet.
    if (value.ok() && *value == true) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      absl::StatusOr<Json> state = Evaluate(describe);
      return absl::DeadlineExceededError(absl::StrCat(
          "waited ", absl::FormatDuration(timeout), " for ", condition, "; last: ",
          value.ok() ? value->dump() : value.status().ToString(), "; ", describe, " = ",
          state.ok() ? Describe(*state) : state.status().ToString()));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

absl::Status CdpPage::InsertText(const std::string& text) {
  return browser_->Call("Input.insertText", {{"text", text}}, session_).status();
}

absl::Status CdpPage::Screenshot(const std::string& png_path, bool full_page) {
  PTXB_ASSIGN_OR_RETURN(Json shot, browser_->Call("Page.captureScreenshot",
                                                  {{"format", "png"},
                                                   {"captureBeyondViewport", full_page}},
                                                  session_));
  std::string png;
  if (!absl::Base64Unescape(shot.value("data", ""), &png) || png.empty()) {
    return absl::InternalError("Page.captureScreenshot gave no PNG");
  }
  return WriteFile(png_path, png);
}

std::vector<std::string> CdpPage::Problems() const {
  std::vector<std::string> out;
  for (const Json& event : browser_->events()) {
    if (event.value("sessionId", "") != session_) continue;
    const std::string method = event.value("method", "");
    const Json& params = event.contains("params") ? event["params"] : Json::object();
    if (method == "Runtime.exceptionThrown") {
      const Json& d = params["exceptionDetails"];
      out.push_back(absl::StrCat(
          "exception: ", d.value("text", ""), " ",
          d.contains("exception") ? Describe(d["exception"].value("description", Json())) : "",
          " at ", d.value("url", "")));
    } else if (method == "Runtime.consoleAPICalled") {
      const std::string type = params.value("type", "");
      if (type != "error" && type != "warning" && type != "assert") continue;
      std::string text;
      for (const Json& arg : params.value("args", Json::array())) {
        absl::StrAppend(&text, Describe(arg.value("value", arg.value("description", Json()))), " ");
      }
      out.push_back(absl::StrCat("console.", type, ": ", text));
    } else if (method == "Log.entryAdded") {
      const Json& entry = params["entry"];
      const std::string level = entry.value("level", "");
      if (level != "error" && level != "warning") continue;
      out.push_back(absl::StrCat("log ", level, " (", entry.value("source", ""),
                                 "): ", entry.value("text", ""), " at ", entry.value("url", "")));
    }
  }
  return out;
}

}  // namespace ptxbench::testing
