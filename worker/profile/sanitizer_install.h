#ifndef PTXBENCH_WORKER_PROFILE_SANITIZER_INSTALL_H_
#define PTXBENCH_WORKER_PROFILE_SANITIZER_INSTALL_H_

// Where compute-sanitizer is on a worker's node (docs/MEASUREMENT.md, "The
// memcheck gate"): the program a sanitize run starts, the installation the
// candidate's view binds whole (its injection libraries live beside the
// program), and its version, for the worker's capabilities. The toolkit's
// bin/compute-sanitizer may be a script or a link in front of
// <CUDA>/compute-sanitizer/compute-sanitizer; the view holds no shell, so
// the program itself is what runs.

#include <string>

#include "absl/status/statusor.h"

namespace ptxbench::worker {

struct SanitizerInstall {
  std::string executable;  // an ELF program, canonical
  std::string root;        // its directory, canonical
  std::string version;     // e.g. "2025.3.0.0"
  // "compute-sanitizer 2025.3.0.0 at /usr/local/cuda/bin/compute-sanitizer".
  std::string Describe(const std::string& configured) const;
};

// From the path a worker was given: followed to its file; an ELF program
// is the executable, else <its directory>/../compute-sanitizer/
// compute-sanitizer. `--version` must then answer. Errors name what is
// missing, for the worker's log and `ptxbench workers`.
absl::StatusOr<SanitizerInstall> FindSanitizer(const std::string& configured);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_PROFILE_SANITIZER_INSTALL_H_
