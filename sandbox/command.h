#ifndef PTXBENCH_SANDBOX_COMMAND_H_
#define PTXBENCH_SANDBOX_COMMAND_H_

// Runs a command to completion in a sandbox (process.h): its stdout and
// stderr captured together (bounded), a hard wall-clock deadline, the
// policy's limits enforced while it runs. For tools run on submitted code:
// the compiler, ptxas.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sandbox/policy.h"

namespace ptxbench::sandbox {

struct CommandOptions {
  Policy policy;
  std::vector<std::string> argv;  // argv[0]: a path inside the view
  absl::Duration deadline = absl::Minutes(2);
  // Output past this many bytes is read and dropped (the command never
  // blocks on a full pipe).
  size_t max_output_bytes = 1 << 20;
};

struct CommandResult {
  Outcome outcome;
  std::string output;  // stdout and stderr interleaved (plus a note when truncated)
  bool truncated = false;
  absl::Duration elapsed;
  bool ok() const {
    return outcome.setup_error.empty() && outcome.exited && outcome.exit_code == 0 &&
           !outcome.timed_out && !outcome.memory_exceeded && !outcome.processes_exceeded;
  }
};

// Errors only when the sandbox cannot be made (see SandboxedProcess::Start).
absl::StatusOr<CommandResult> RunCommand(const CommandOptions& options);

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_COMMAND_H_
