#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_PYTHON_VIEW_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_PYTHON_VIEW_H_

// What a Python with torch and Triton needs to see in a sandbox that runs a
// Triton candidate (worker/runner/hosts/isolation.h): its interpreter, its
// standard library, every directory on its module path (where torch, Triton,
// the CUDA wheels' libraries and Triton's own ptxas live) and its C headers
// (Triton's JIT compiles a launcher against them). Asked of the interpreter
// itself, run in isolated mode (-I) as the sandbox runs it, so the view and
// the import path agree.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxbench::runner {

// The host paths `python` reads (files or directories, each existing, none
// inside another of the list). kFailedPrecondition naming what went wrong
// when the interpreter does not answer within `deadline`.
absl::StatusOr<std::vector<std::string>> PythonRoots(const std::string& python,
                                                     absl::Duration deadline = absl::Seconds(30));

// The roots in `printed` (PythonRoots' probe output: one path per line),
// absolute and existing, with every path inside another dropped; for tests.
std::vector<std::string> CollapseRoots(absl::string_view printed);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_PYTHON_VIEW_H_
