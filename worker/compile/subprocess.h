#ifndef PTXBENCH_WORKER_COMPILE_SUBPROCESS_H_
#define PTXBENCH_WORKER_COMPILE_SUBPROCESS_H_

// Runs a tool (nvcc, ptxas, ...) as a child process with a hard wall-clock
// deadline. The child leads its own process group; when the deadline passes
// the whole group gets SIGKILL, so grandchildren (cicc, ptxas, the host
// compiler) die with it. Thread-safe: each call is independent.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ptxbench::worker {

struct SubprocessOptions {
  std::vector<std::string> argv;  // argv[0] is the program path (no PATH search)
  std::string cwd;                // empty: inherit
  absl::Duration deadline = absl::Minutes(2);
  // stdout and stderr are captured together, up to this many bytes; the rest
  // is read and dropped so the child never blocks on a full pipe.
  size_t max_output_bytes = 1 << 20;
  // The child's whole environment ("KEY=VALUE"); unset: the parent's.
  std::optional<std::vector<std::string>> environment;
  // setrlimit(resource, {value, value}) in the child before exec.
  std::vector<std::pair<int, uint64_t>> rlimits;
};
// Every descriptor above stderr is closed in the child before exec, so a
// child never holds the parent's sockets or files (gRPC's are not
// close-on-exec).

struct SubprocessResult {
  int pid = 0;          // also the process group id
  bool exited = false;  // terminated by exit(); exit_code is valid
  int exit_code = -1;
  int term_signal = 0;     // the signal that ended it, when !exited
  bool timed_out = false;  // killed by us at the deadline
  bool truncated = false;  // output exceeded max_output_bytes
  std::string output;      // stdout and stderr interleaved (plus a note when truncated)
  absl::Duration elapsed;

  bool ok() const { return exited && exit_code == 0; }
};

// Runs the command to completion or to the deadline. Errors only for
// infrastructure problems (no pipe, fork failed); a program that cannot be
// executed comes back as exit code 127 with the reason in `output`.
absl::StatusOr<SubprocessResult> RunSubprocess(const SubprocessOptions& options);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_SUBPROCESS_H_
