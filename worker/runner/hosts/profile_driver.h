#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_PROFILE_DRIVER_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_PROFILE_DRIVER_H_

// A profile run's first process in the candidate's sandbox
// (docs/MEASUREMENT.md, "Profiles"): `ptxbench-candidate-host --profile-with
// NCU ...` starts Nsight Compute with the candidate host as its target (the
// same binary, as an ordinary host), waits for it, then has ncu read its own
// report back as the raw CSV page the worker summarizes
// (worker/profile/ncu_summary.h). Both files stay on the candidate's disk
// for the harness to copy out. Everything here runs as the candidate, so
// nothing it writes is trusted: a forged CSV only misleads the kernel's own
// author. Plain POSIX.

#include <string>
#include <vector>

namespace ptxbench::runner {

struct ProfileDriverArgs {
  std::string ncu;         // the ncu executable
  int launches = 32;       // kernel launches profiled at most
  std::string metrics;     // comma-separated (ncu --metrics)
  std::string out_prefix;  // writes <out_prefix>.ncu-rep and <out_prefix>.csv
  std::vector<std::string> target;  // the host's own command line
};

// ncu's command line for the profile: no clock control (the node's clocks
// are every evaluation's), the host's own first launch (its calibration
// kernel, before anything submitted is loaded) skipped, at most `launches`.
std::vector<std::string> NcuProfileArgv(const ProfileDriverArgs& args);
// ncu's command line that prints the report's raw page (stdout).
std::vector<std::string> NcuImportArgv(const ProfileDriverArgs& args);

// Runs `argv` (a tool: ncu, compute-sanitizer), stdout to `stdout_path`
// when set, and waits for it: its exit code (128 + signal when killed), or
// 127 when it could not be started.
int RunToolProcess(const std::vector<std::string>& argv, const std::string& stdout_path);

// Runs both; returns the profile's exit code (128 + signal when killed),
// or 127 when ncu could not be started.
int RunProfileDriver(const ProfileDriverArgs& args);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_PROFILE_DRIVER_H_
