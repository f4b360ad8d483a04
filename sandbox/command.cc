#include "sandbox/command.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "process/output_collector.h"
#include "sandbox/sandboxed_process.h"

namespace ptxbench::sandbox {
namespace {

// How often the limits are checked while the command runs: a fast allocator
// gets about this long past the memory limit under the watchdog.
constexpr absl::Duration kPollInterval = absl::Milliseconds(5);

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
  process::OutputCollector output(fds[0], options.max_output_bytes);
  const absl::Time deadline = start + options.deadline;
  while (!(*process)->Poll()) {
    if (absl::Now() >= deadline) (*process)->Kill(SandboxedProcess::KillReason::kDeadline);
    output.Await(kPollInterval);
  }
  // Everything in the sandbox is dead, so the pipe has no writer left.
  output.DrainToEnd(absl::Milliseconds(100));
  close(fds[0]);
  CommandResult result;
  result.outcome = (*process)->outcome();
  result.elapsed = absl::Now() - start;
  result.truncated = output.truncated();
  result.output = output.Take();
  return result;
}

}  // namespace ptxbench::sandbox
