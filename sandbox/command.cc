#include "sandbox/command.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "sandbox/process.h"

namespace ptxbench::sandbox {
namespace {

// How often the limits are checked while the command runs: a fast allocator
// gets about this long past the memory limit under the watchdog.
constexpr int kPollMs = 5;

class OutputReader {
 public:
  OutputReader(int fd, size_t max_bytes, CommandResult* result)
      : fd_(fd), max_bytes_(max_bytes), result_(result) {}
  // Reads what is there now; false at end of file.
  bool Drain() {
    char buf[65536];
    while (true) {
      const ssize_t n = read(fd_, buf, sizeof(buf));
      if (n > 0) {
        const size_t room = max_bytes_ - std::min(max_bytes_, result_->output.size());
        if (static_cast<size_t>(n) > room) result_->truncated = true;
        result_->output.append(buf, std::min(room, static_cast<size_t>(n)));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n != 0;  // EAGAIN: more later; 0: end of file
    }
  }

 private:
  const int fd_;
  const size_t max_bytes_;
  CommandResult* const result_;
};

}  // namespace

absl::StatusOr<CommandResult> RunCommand(const CommandOptions& options) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe2: ", strerror(errno)));
  SandboxedProcess::Spec spec;
  spec.policy = options.policy;
  spec.argv = options.argv;
  spec.fds = {{1, fds[1]}, {2, fds[1]}};
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<SandboxedProcess>> process = SandboxedProcess::Start(spec);
  close(fds[1]);
  if (!process.ok()) {
    close(fds[0]);
    return process.status();
  }
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  CommandResult result;
  OutputReader reader(fds[0], options.max_output_bytes, &result);
  const absl::Time deadline = start + options.deadline;
  bool open = true;
  while (!(*process)->Poll()) {
    if (absl::Now() >= deadline) (*process)->Kill(SandboxedProcess::KillReason::kDeadline);
    if (open) {
      pollfd p{fds[0], POLLIN, 0};
      poll(&p, 1, kPollMs);
      open = reader.Drain();
    } else {
      usleep(kPollMs * 1000);
    }
  }
  // Everything in the sandbox is dead, so the pipe has no writer left.
  while (open) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) break;
    open = reader.Drain();
  }
  close(fds[0]);
  result.outcome = (*process)->outcome();
  result.elapsed = absl::Now() - start;
  if (result.truncated) {
    absl::StrAppend(&result.output, "\n[output truncated at ", options.max_output_bytes,
                    " bytes]\n");
  }
  return result;
}

}  // namespace ptxbench::sandbox
