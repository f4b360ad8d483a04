#ifndef PTXBENCH_SANDBOX_SANDBOXED_PROCESS_H_
#define PTXBENCH_SANDBOX_SANDBOXED_PROCESS_H_

// A process running under a sandbox Policy (policy.h).
//
// Shape: the caller's child is the sandbox's init (PID 1 of a new PID
// namespace). It builds the filesystem view, pivots into it, then forks the
// payload, which drops to the policy's uid, loses every capability, sets
// no_new_privs, installs the seccomp filter and execs. The init then drops
// its own privileges and only waits: when the payload ends, the init reports
// how and exits, and the kernel kills whatever else is left in the
// namespace. Killing the init (Kill, the deadline, a limit) kills them all.
// The payload cannot signal or trace the init (namespace init, seccomp).
//
// A sandbox outlives nothing: its init dies with the thread that called
// Start (a parent-death signal, armed again after the init's change of ids,
// and its caller's pidfd checked after that for a caller that died before),
// so a caller killed any way (kill -9 included) takes its sandboxes, and
// whatever they started, detached or stopped, with it. So the thread that
// calls Start must outlive the sandbox (another may Poll and Kill it, as the
// harness's watcher does).
//
// Nothing of the caller shows inside: the init's /proc/1/cmdline reads
// "ptxbench-init" (zeros in a user namespace) and its environment nothing,
// and the init enters a cgroup namespace of its own once it is in its
// cgroup, so /proc/self/cgroup shows "/" as its path.
//
// A sandbox may start suspended: everything is set up and the payload waits
// just before exec until Release(). A caller that must give up privileges
// before the payload may run (the runner's harness) starts it while still
// privileged and releases it later.
//
// Thread-compatible: one owner drives an instance.

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/limiter.h"
#include "sandbox/policy.h"

namespace ptxbench::sandbox {

class SandboxedProcess {
 public:
  struct Spec {
    Policy policy;
    // argv[0] is a path inside the view.
    std::vector<std::string> argv;
    // The payload's descriptors: (its fd number, the caller's fd). Anything
    // else the caller has open stays behind; stdin is /dev/null unless
    // given.
    std::vector<std::pair<int, int>> fds;
    bool suspended = false;
  };

  // Errors only when the sandbox cannot be made (kFailedPrecondition naming
  // the protection the machine refused, kInternal otherwise). A payload
  // that cannot be exec'd is an Outcome with setup_error.
  static absl::StatusOr<std::unique_ptr<SandboxedProcess>> Start(const Spec& spec);
  ~SandboxedProcess();  // kills what is still running and cleans up
  SandboxedProcess(const SandboxedProcess&) = delete;
  SandboxedProcess& operator=(const SandboxedProcess&) = delete;

  // Lets a suspended payload exec. kFailedPrecondition if it already ended.
  absl::Status Release();
  // Non-blocking: whether everything has ended; enforces the limits first
  // (a process over its limit is killed here when the limiter is the
  // watchdog). Call it often (every few milliseconds) while it runs.
  bool Poll();
  // Kills the whole sandbox now; `why` marks the outcome.
  enum class KillReason { kCaller, kDeadline };
  void Kill(KillReason why = KillReason::kCaller);
  // Valid once Poll() returned true.
  const Outcome& outcome() const { return outcome_; }
  pid_t init_pid() const { return init_pid_; }
  // The CPU time its processes have used (Limiter::CpuTime).
  absl::Duration CpuTime() const;

 private:
  SandboxedProcess() = default;
  // SIGKILL to the init. The init takes the keeper uid as its real uid only
  // once it has forked the payload, a moment after Start returns; until then
  // a caller that dropped to the keeper uid is refused (EPERM), so it tries
  // again for up to 2 s rather than leave the sandbox running.
  void KillInit();
  void Reap(int wait_status);
  void ReadStatus();

  pid_t init_pid_ = -1;
  bool ended_ = false;
  int status_fd_ = -1;   // reports from the init and the payload
  int release_fd_ = -1;  // one byte lets a suspended payload exec
  std::string root_dir_;  // mount point of the view, removed at the end
  std::unique_ptr<Limiter> limiter_;
  Outcome outcome_;
};

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_SANDBOXED_PROCESS_H_
