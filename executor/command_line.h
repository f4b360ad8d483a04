#ifndef PTXBENCH_EXECUTOR_COMMAND_LINE_H_
#define PTXBENCH_EXECUTOR_COMMAND_LINE_H_

// Command-line handling shared by the executor daemons. absl's parser exits
// with status 1 on an unknown flag or a bad value; the daemons promise 2 for
// every usage error, so the arguments are checked against the registered
// flags first.

#include <string>

#include "absl/status/status.h"

namespace ptxbench::executor {

// The exit status of every usage error.
inline constexpr int kUsageExitCode = 2;

// Flag names may use '-' or '_' (--latency-ms is --latency_ms, see
// common/flags.h). INVALID_ARGUMENT naming the first unknown flag, missing or malformed value,
// or positional argument in argv[1..]. --help and friends are left to absl.
// Checks values by parsing them into the flags (absl parses them again).
absl::Status CheckCommandLine(int argc, char** argv);

// Where executors find the scheduler when --scheduler is not given:
// $PTXBENCH_SCHEDULER, else 127.0.0.1:50051.
std::string DefaultSchedulerAddress();

// CheckCommandLine, then absl::ParseCommandLine. On a usage error prints
// "<program>: <error>" to stderr and exits with kUsageExitCode.
void ParseCommandLineOrExit(int argc, char** argv);

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_COMMAND_LINE_H_
