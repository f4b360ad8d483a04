#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_ISOLATION_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_ISOLATION_H_

// The harness's side of the trust boundary (docs/SECURITY.md). The runner
// starts with the worker's privileges and, before it touches the GPU:
//  1. enters a mount namespace of its own, and makes the candidate's disk
//     there: a size-limited tmpfs (its quota: a full one fails nobody else),
//     mounted noexec, owned by the candidate's uid; the submission's module
//     is copied beside it into a directory of its own, read-only to it;
//  2. starts the candidate host in its sandbox, suspended (a sandbox needs
//     the privileges the harness is about to give up), as the candidate's
//     own uid;
//  3. forks the reference host (ptxbench's code only: no sandbox);
//  4. drops to the harness's uid and becomes non-dumpable. The hosts share
//     nothing with the harness but the socket and the device memory it hands
//     them by descriptor (bracket.h, workload_eval.h).

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/sandboxed_process.h"
#include "worker/runner/hosts/jit_images.h"
#include "worker/runner/wire/job.h"

namespace ptxbench::runner {

class Isolation {
 public:
  // Step 1, and the candidate's directory (under `private_dir`) with the
  // artifact copied in. Errors are infrastructure problems.
  static absl::StatusOr<std::unique_ptr<Isolation>> Prepare(const RunnerJob& job,
                                                            const std::string& private_dir);

  // Step 2: `channel` and `output` become the host's fd 3 and stdout/stderr.
  absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> SpawnCandidateHost(int channel,
                                                                               int output);
  // A Triton candidate's JIT host (step 2 too, before it): the same Python
  // candidate host in the same sandbox, but for its JIT's cache, which it
  // may write and run; the candidate host that times sees that cache
  // read-only, and nothing it may write can be run. Triton only.
  absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> SpawnJitHost(int channel, int output);
  // Triton: the images the JIT host left in its cache (jit_images.h), once
  // it ended; empty for a build.
  JitCache JitImages() const;
  // Step 3: `body` runs in the child after it dropped to the sandbox uid;
  // its return value is the child's exit code.
  absl::StatusOr<pid_t> ForkReferenceHost(const std::function<int()>& body);
  // Step 4.
  absl::Status DropPrivileges();

  // A profile (or sanitize) run's file `name` (a plain name) from the
  // directory the profiler (or sanitizer) writes into, opened for reading: through the directory as it was
  // made (a descriptor held since), never through a link the candidate put in
  // its place or in place of the file, never blocking (a FIFO). -1 if absent.
  int OpenProfileFile(const char* name) const;
  // The submission as the candidate host sees it.
  const std::string& candidate_artifact() const { return candidate_artifact_; }
  // One line per protection in force, for the logs.
  std::vector<std::string> Protections() const;
  // When the candidate's disk is full: a sentence saying so and naming its
  // quota, for the errors of a candidate that failed; else empty.
  std::string DiskFullNote() const;

 private:
  Isolation() = default;
  absl::Status DropTo(uid_t uid, gid_t gid) const;

  RunnerJob job_;
  bool root_ = false;
  std::string candidate_artifact_;
  absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> Spawn(const sandbox::Policy& policy,
                                                                   std::vector<std::string> argv,
                                                                   int channel, int output);

  int profile_dir_fd_ = -1;  // O_PATH of a profile run's directory
  int disk_fd_ = -1;         // O_PATH of the candidate's disk, for its free space
  sandbox::Policy policy_;
  sandbox::Policy jit_policy_;  // triton: the JIT host's
  int jit_dir_fd_ = -1;         // triton: O_PATH of its cache's disk (JitImages)
};

// Where the candidate host's own files are on the runner's side.
struct CandidateDirs {
  std::string module;  // the submission's module, read-only and executable for it
  std::string work;    // its working directory (on its disk)
  std::string shm;     // its /dev/shm (on its disk too)
  // A profile or sanitize run's: where the profiler writes its report and
  // CSV, or the sanitizer its log (on its disk; the harness may open files
  // there by name, not list it).
  std::string profile;
  // triton: the JIT's cache, a disk of its own that may hold code (not
  // noexec), written by the JIT host only.
  std::string jit;
  // triton: the host directories its Python reads (python_view.h).
  std::vector<std::string> python_roots;
};

// The candidate host's sandbox: the libraries the hosts need (those the
// harness has loaded, the CUDA driver's) with every vendor library masked,
// the loader cache, /sys, the GPU's device nodes, the host binary, the
// module, and its working directory and /dev/shm (writable, never
// executable, on its own disk); nothing else. It runs as the candidate's
// uid, may not open or share other processes' GPU objects nor make
// executable memory of its own (sandbox/policy.h), and its CPU is limited.
//
// A Triton candidate's (job.language "triton") differs: its Python's
// directories are there too, and no vendor library is masked (torch links
// cuBLAS and cuDNN: it does not import without them); `jit` selects the JIT
// host's policy, which adds the host C compiler (from /usr) and its cache
// writable and executable, where the other binds that cache read-only.
absl::StatusOr<sandbox::Policy> CandidateHostPolicy(const RunnerJob& job,
                                                    const CandidateDirs& dirs, bool jit = false);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_ISOLATION_H_
