#ifndef PTXBENCH_WORKER_HARNESS_PROCESS_H_
#define PTXBENCH_WORKER_HARNESS_PROCESS_H_

// Runs the harness of an evaluation (ptxbench-runner, which starts the real
// sandbox of the candidate itself: sandbox/, docs/SECURITY.md) as a child
// process kept apart from the worker's state:
//  - its own process group, killed whole at a hard wall-clock deadline;
//  - a private temporary directory (mode 0700) as cwd, TMPDIR and HOME,
//    removed afterwards whatever happened;
//  - a scrubbed environment: only the variables named in `pass_env`, plus
//    TMPDIR, HOME and CUDA_VISIBLE_DEVICES pinning it to one GPU (or none);
//  - no inherited descriptors beyond stdio (the worker's gRPC sockets stay
//    behind), resource limits on file size, open files and core dumps.
// The child's end is classified: a deadline is TIMEOUT, a signal or a
// non-zero exit is RUNTIME_ERROR with the diagnostic; a clean exit leaves
// the caller to read the files it asked for (collected in every case, so
// partial results of a crashed child survive). Thread-safe.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "process/run.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::worker {

struct HarnessProcessOptions {
  // The program and its arguments; "{dir}" in an argument is replaced by the
  // private directory's path.
  std::vector<std::string> argv;
  // Written into the private directory before the start (name -> content).
  std::map<std::string, std::string> files;
  // Read back from the private directory after the child ended, however it
  // ended (files it never wrote are absent from `collected`).
  std::vector<std::string> collect;
  absl::Duration deadline = absl::Minutes(5);
  int gpu_index = -1;  // CUDA_VISIBLE_DEVICES; -1: no GPU visible
  std::string temp_root = "/tmp";
  std::vector<std::string> pass_env = {"PATH", "LD_LIBRARY_PATH"};
  uint64_t max_file_bytes = uint64_t{4} << 30;
  uint64_t max_open_files = 1024;
};

struct HarnessProcessOutcome {
  process::RunResult process;
  // EVAL_STATUS_UNSPECIFIED after a clean exit; else TIMEOUT or RUNTIME_ERROR.
  ptxbench::v1::EvalStatus status = ptxbench::v1::EVAL_STATUS_UNSPECIFIED;
  std::string diagnostic;  // why, with the tail of the child's output
  std::map<std::string, std::string> collected;
  std::string private_dir;  // already removed when the call returns
};

// Errors only for infrastructure problems (no temp dir, fork failed).
absl::StatusOr<HarnessProcessOutcome> RunHarnessProcess(const HarnessProcessOptions& options);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_HARNESS_PROCESS_H_
