#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_SANITIZE_DRIVER_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_SANITIZE_DRIVER_H_

// A sanitize run's first process in the candidate's sandbox
// (docs/MEASUREMENT.md, "The memcheck gate"): `ptxbench-candidate-host
// --sanitize-with SANITIZER ...` starts compute-sanitizer's memcheck with the
// candidate host as its target (the same binary, as an ordinary host) and
// waits for it. The sanitizer writes its report to a file of its own on the
// candidate's disk (--log-file), which the harness copies out by name
// (Isolation::OpenToolFile): the candidate's stdout and stderr, where a
// kernel prints, never reach it. Plain POSIX.

#include <string>
#include <vector>

namespace ptxbench::runner {

struct SanitizeDriverArgs {
  std::string sanitizer;  // the compute-sanitizer executable
  int print_limit = 1;    // errors reported at most
  std::string log_path;   // the report's file
  std::vector<std::string> target;  // the host's own command line
};

// compute-sanitizer's command line: memcheck, device backtraces only (host
// frames name ptxbench's own host, never the kernel), the NVTX memory API on
// (the host marks each tensor's bytes inside its padded allocation, so a
// write past a tensor's end is an error even where the padding would hide
// it from the checks: worker/runner/hosts/tensor_extents.h), leak checking off
// (the harness's buffers are the host's to unmap, not the kernel's).
std::vector<std::string> SanitizerArgv(const SanitizeDriverArgs& args);

// Runs it; returns its exit code (128 + signal when killed), or 127 when it
// could not be started.
int RunSanitizeDriver(const SanitizeDriverArgs& args);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_SANITIZE_DRIVER_H_
