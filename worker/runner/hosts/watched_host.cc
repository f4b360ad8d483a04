#include "worker/runner/hosts/watched_host.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/printable_text.h"
#include "worker/runner/wire/protocol.h"

namespace ptxbench::runner {
namespace {

constexpr size_t kKeepHead = 2000;
constexpr size_t kKeepTail = 4000;
constexpr int kPollMs = 5;

}  // namespace

WatchedHost::WatchedHost(std::unique_ptr<sandbox::SandboxedProcess> process, int output_fd)
    : process_(std::move(process)), output_fd_(output_fd) {
  fcntl(output_fd_, F_SETFL, fcntl(output_fd_, F_GETFL) | O_NONBLOCK);
  thread_ = std::thread([this] { Loop(); });
}

WatchedHost::~WatchedHost() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    process_->Kill();
  }
  thread_.join();
  close(output_fd_);
}

absl::Status WatchedHost::Release() {
  absl::MutexLock lock(&mu_);
  return process_->Release();
}

void WatchedHost::Kill(sandbox::SandboxedProcess::KillReason why) {
  absl::MutexLock lock(&mu_);
  process_->Kill(why);
}

bool WatchedHost::ended() const {
  absl::MutexLock lock(&mu_);
  return ended_;
}

bool WatchedHost::WaitForEnd(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ended_; };
  return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
}

void WatchedHost::Loop() {
  char buf[8192];
  bool open = true;
  while (true) {
    if (open) {
      pollfd p{output_fd_, POLLIN, 0};
      poll(&p, 1, kPollMs);
    } else {
      usleep(kPollMs * 1000);
    }
    absl::MutexLock lock(&mu_);
    while (open) {
      const ssize_t n = read(output_fd_, buf, sizeof(buf));
      if (n > 0) {
        absl::string_view chunk(buf, static_cast<size_t>(n));
        if (head_.size() < kKeepHead) {
          const size_t take = std::min(kKeepHead - head_.size(), chunk.size());
          head_.append(chunk.data(), take);
          chunk.remove_prefix(take);
        }
        tail_.append(chunk.data(), chunk.size());
        if (tail_.size() > 2 * kKeepTail) {
          dropped_ += tail_.size() - kKeepTail;
          tail_.erase(0, tail_.size() - kKeepTail);
        }
        continue;
      }
      if (n == 0) open = false;
      break;  // EAGAIN, or an error
    }
    if (!ended_ && process_->Poll()) {
      ended_ = true;
      outcome_ = process_->outcome();
    }
    if (ended_ && (!open || stop_)) return;
  }
}

std::string WatchedHost::Output() const {
  absl::MutexLock lock(&mu_);
  return OutputLocked();
}

std::string WatchedHost::OutputLocked() const {
  mu_.AssertHeld();
  return absl::StrCat(PrintableLines(head_, head_.size()),
                      dropped_ > 0 ? absl::StrCat("\n[... ", dropped_, " bytes ...]\n") : "",
                      PrintableLines(tail_, tail_.size()));
}

std::string WatchedHost::Describe() const {
  absl::MutexLock lock(&mu_);
  std::string how;
  const sandbox::Outcome& o = outcome_;
  if (!ended_) {
    how = "is still running";
  } else if (!o.setup_error.empty()) {
    how = absl::StrCat("could not start (", o.setup_error, ")");
  } else if (o.memory_exceeded) {
    how = absl::StrCat("exceeded its memory limit (peak ", o.peak_memory_bytes >> 20, " MiB)");
  } else if (o.processes_exceeded) {
    how = "exceeded its process limit";
  } else if (o.cpu_time_exceeded) {
    how = "exceeded its CPU time limit";
  } else if (o.timed_out) {
    how = "was killed at its deadline";
  } else if (o.exited) {
    how = absl::StrCat("exited with code ", o.exit_code);
  } else {
    how = absl::StrCat("was killed by signal ", o.term_signal, " (", strsignal(o.term_signal), ")");
  }
  std::string text = absl::StrCat("the candidate host ", how);
  if (!head_.empty() || !tail_.empty()) absl::StrAppend(&text, "; its output:\n", OutputLocked());
  return text;
}

}  // namespace ptxbench::runner
