#ifndef PTXBENCH_WORKER_RUNNER_ISOLATION_H_
#define PTXBENCH_WORKER_RUNNER_ISOLATION_H_

// The harness's side of the trust boundary (docs/SECURITY.md). The runner
// starts with the worker's privileges and, before it touches the GPU:
//  1. enters a mount namespace of its own with a private /dev/shm (CUDA's
//     interprocess events live there as files; the hosts share this one and
//     see no other);
//  2. starts the candidate host in its sandbox, suspended (a sandbox needs
//     the privileges the harness is about to give up), with a copy of the
//     submission in its own directory;
//  3. forks the reference host (ptxbench's code only: no sandbox);
//  4. drops to the sandbox uid and becomes non-dumpable. CUDA lets an
//     interprocess event be opened only by a process of the exporter's uid,
//     so the harness and both hosts share that uid; the candidate host's
//     namespaces, view and seccomp filter are what keep it from the harness.

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/process.h"
#include "worker/runner/job.h"

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
  // Step 3: `body` runs in the child after it dropped to the sandbox uid;
  // its return value is the child's exit code.
  absl::StatusOr<pid_t> ForkReferenceHost(const std::function<int()>& body);
  // Step 4.
  absl::Status DropPrivileges();

  // The submission as the candidate host sees it.
  const std::string& candidate_artifact() const { return candidate_artifact_; }
  // One line per protection in force, for the logs.
  std::vector<std::string> Protections() const;

 private:
  Isolation() = default;
  absl::Status DropTo(uid_t uid, gid_t gid) const;

  RunnerJob job_;
  bool root_ = false;
  std::string candidate_dir_;
  std::string candidate_artifact_;
  sandbox::Policy policy_;
};

// The candidate host's sandbox: the libraries the hosts need (those the
// harness has loaded, the CUDA driver's) with every vendor library masked,
// the loader cache, /sys, the GPU's device nodes, the shared /dev/shm, the
// host binary and the candidate's directory; nothing else.
absl::StatusOr<sandbox::Policy> CandidateHostPolicy(const RunnerJob& job,
                                                    const std::string& candidate_dir);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_ISOLATION_H_
