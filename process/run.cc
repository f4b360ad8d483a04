#include "process/run.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "process/output_collector.h"

namespace ptxbench::process {

absl::StatusOr<RunResult> Run(const RunOptions& options) {
  SpawnOptions spawn = options;
  spawn.output = SpawnOptions::Output::kCapture;
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options.deadline;
  RunResult result;
  absl::StatusOr<Process> child = Process::Spawn(spawn);
  if (!child.ok()) {
    if (!absl::IsFailedPrecondition(child.status())) return child.status();
    result.exited = true;
    result.exit_code = 127;
    result.output = absl::StrCat(child.status().message(), "\n");
    result.elapsed = absl::Now() - start;
    return result;
  }
  result.pid = child->pid();
  OutputCollector output(child->output_fd(), options.max_output_bytes);
  // Readable once the child ends, so the loop wakes at its exit. Polling for
  // the exit every 50 ms instead added 0-50 ms to every command once its
  // output had ended (`ptxbench status` run by bench/submit_bench took 30 or
  // 80 ms). -1 on kernels before 5.3: then the loop polls every 5 ms.
  const int exit_fd = static_cast<int>(syscall(SYS_pidfd_open, child->pid(), 0));
  const absl::Duration poll_at_most = exit_fd >= 0 ? absl::Milliseconds(50) : absl::Milliseconds(5);
  // Ended() leaves the child a zombie, so its pid (the group's id) cannot be
  // reused before the group is killed below.
  while (!child->Ended()) {
    if (!result.timed_out && absl::Now() >= deadline) {
      child->SignalGroup(SIGKILL);
      result.timed_out = true;
    }
    // Never long: the child may end without closing a pipe that a
    // grandchild still holds.
    output.Await(result.timed_out ? absl::Milliseconds(10)
                                  : std::clamp(deadline - absl::Now(), absl::Milliseconds(1),
                                               poll_at_most),
                 exit_fd);
  }
  if (exit_fd >= 0) close(exit_fd);
  // Stragglers that outlived the child go too.
  child->SignalGroup(SIGKILL);
  static_cast<ExitStatus&>(result) = child->Wait();
  output.DrainToEnd(absl::Seconds(1));
  result.truncated = output.truncated();
  result.output = output.Take();
  result.elapsed = absl::Now() - start;
  if (result.timed_out) {
    absl::StrAppend(&result.output, "\n[killed: deadline of ",
                    absl::FormatDuration(options.deadline), " exceeded]\n");
  }
  return result;
}

}  // namespace ptxbench::process
