#ifndef PTXBENCH_PROCESS_RUN_H_
#define PTXBENCH_PROCESS_RUN_H_

// Runs a program to completion with a hard wall-clock deadline and its
// output captured (bounded). When the deadline passes the child's whole
// process group gets SIGKILL, so grandchildren (nvcc's cicc and ptxas, a
// shell's background jobs) die with it; so does whatever is left in the
// group when the child ends. Thread-safe: each call is independent.

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "process/process.h"

namespace ptxbench::process {

// SpawnOptions' output is always captured (stdout, and stderr with it unless
// stderr_with_output is false).
struct RunOptions : SpawnOptions {
  absl::Duration deadline = absl::Minutes(2);
  // Output past this many bytes is read and dropped.
  size_t max_output_bytes = 1 << 20;
};

struct RunResult : ExitStatus {
  int pid = 0;             // also the process group's id
  bool timed_out = false;  // killed by Run at the deadline
  bool truncated = false;  // the output exceeded max_output_bytes
  // The output, plus a note when truncated or killed at the deadline.
  std::string output;
  absl::Duration elapsed;
};

// Errors only for the machine's problems (no pipe, fork failed). A program
// that cannot be executed comes back as a shell reports it: exit code 127,
// the reason (Process::Spawn's error) as the output.
absl::StatusOr<RunResult> Run(const RunOptions& options);

}  // namespace ptxbench::process

#endif  // PTXBENCH_PROCESS_RUN_H_
