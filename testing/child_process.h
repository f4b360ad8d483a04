#ifndef PTXBENCH_TESTING_CHILD_PROCESS_H_
#define PTXBENCH_TESTING_CHILD_PROCESS_H_

// Child processes for cross-process tests and benchmarks, on top of
// process::Process: a binary started with its output in a log file, a
// command run to completion with its stdout captured.

#include <sys/types.h>

#include <string>
#include <vector>

#include "process/process.h"

namespace ptxbench::testing {

// Starts argv[0] with argv, stdout and stderr appended to `log_path`, in the
// test's own process group (so a Ctrl-C or a ctest timeout reaches it too).
// A binary that cannot be started gives a Process that is not running, and
// the reason in the log and on stderr.
process::Process SpawnLogged(const std::vector<std::string>& argv, const std::string& log_path);

struct CommandResult {
  int exit_code = -1;  // as a shell reports it: 128 + the signal if one ended it
  std::string out;     // stdout (stderr too when merged)
};

// Runs argv to completion (ten minutes at most), capturing stdout, and
// stderr with it when `merge_stderr` (else stderr is the test's).
CommandResult RunCommand(const std::vector<std::string>& argv, bool merge_stderr = false);

// Sends `sig` to every process below `root` by parent pid, as Slurm's
// proctrack/linuxproc finds the processes of a job step to signal; returns
// how many got it. `root` itself is spared.
int SignalDescendants(pid_t root, int sig);

// Last `n` lines of a file, for failure messages.
std::string Tail(const std::string& path, int n = 30);

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_CHILD_PROCESS_H_
