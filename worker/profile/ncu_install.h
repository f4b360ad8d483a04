#ifndef PTXBENCH_WORKER_PROFILE_NCU_INSTALL_H_
#define PTXBENCH_WORKER_PROFILE_NCU_INSTALL_H_

// Where Nsight Compute is on a worker's node (docs/MEASUREMENT.md,
// "Profiles"): the executable a profile run starts, the installation the
// candidate's view binds whole, and its version, for the worker's
// capabilities. `ncu` as the toolkit installs it is often a shell script in
// front of the real program (target/<platform>/ncu); the view holds no
// shell, so the program itself is what runs.

#include <string>

#include "absl/status/statusor.h"

namespace ptxbench::worker {

struct NcuInstall {
  std::string executable;  // an ELF program, canonical
  std::string root;        // the installation (holds `target/`), canonical
  std::string version;     // e.g. "2025.3.1.0"
  // "Nsight Compute 2025.3.1.0 at /usr/local/cuda/bin/ncu", for `workers`.
  std::string Describe(const std::string& configured) const;
};

// From the path a worker was given (e.g. /usr/local/cuda/bin/ncu): followed
// to its file; an ELF program is the executable and its directory's parent
// holding `target/` (or its own directory) the root; a script is replaced
// by the program of its installation: the first of its own directory,
// <CUDA>/nsight-compute-*, /opt/nvidia/nsight-compute/* (newest first)
// that holds target/*/ncu. `--version` must then answer. Errors name what
// is missing, for the worker's log and `ptxbench workers`.
// Whether `file` is an ELF program (a tool's real program, not a script).
bool IsElf(const std::string& file);
// What `executable --version` names on its "Version X" line (NVIDIA's tools
// all answer so); FailedPrecondition when it fails or names none.
absl::StatusOr<std::string> ToolVersion(const std::string& executable);

absl::StatusOr<NcuInstall> FindNcu(const std::string& configured,
                                   const std::string& opt_root = "/opt/nvidia/nsight-compute");

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_PROFILE_NCU_INSTALL_H_
