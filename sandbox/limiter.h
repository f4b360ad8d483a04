#ifndef PTXBENCH_SANDBOX_LIMITER_H_
#define PTXBENCH_SANDBOX_LIMITER_H_

// Memory and process limits of one sandbox (policy.h), two ways:
//  - cgroup v2 (where the caller names a cgroup parent with the memory and
//    pids controllers): a child cgroup per sandbox with memory.max,
//    memory.swap.max = 0, memory.oom.group = 1 and pids.max, and cpu.max for
//    a CPU share where the parent can enable the cpu controller (else none);
//    the kernel enforces them, this class reads memory.events / pids.events
//    to say what happened and removes the cgroup at the end;
//  - a watchdog (no cgroup v2, as on the development machine): every call of
//    Exceeded() sums the resident memory and counts the processes of the
//    sandbox's process tree (from /proc/<pid>/task/*/children); the caller
//    polls it every few milliseconds and kills the sandbox when it says so.
//    A fast allocator can get a poll interval's worth of growth past the
//    limit before it is killed. It enforces no CPU share.

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sandbox/policy.h"

namespace ptxbench::sandbox {

class Limiter {
 public:
  // The limiter for `policy` (a watchdog that checks nothing when the policy
  // has no limits). kFailedPrecondition when the cgroup cannot be made.
  static absl::StatusOr<std::unique_ptr<Limiter>> Create(const Policy& policy);
  virtual ~Limiter() = default;

  // Puts the sandbox's init (before it starts its payload) under the limits.
  virtual absl::Status Attach(pid_t init) = 0;
  // Whether a limit was exceeded; sets the outcome's flags and peak. The
  // caller then kills the sandbox.
  virtual bool Exceeded(pid_t init, Outcome* outcome) = 0;
  // After everything ended: the last accounting (a kernel OOM kill, the peak).
  virtual void Finish(Outcome* outcome) = 0;
  // The CPU time (user and system) the sandbox's processes have used:
  // cgroup v2's cpu.stat, or the watchdog's sum over the live process tree
  // (a process that ended takes its share with it).
  virtual absl::Duration CpuTime(pid_t init) = 0;
  // "cgroup v2 (/sys/fs/cgroup/...)" or "watchdog".
  virtual std::string Describe() const = 0;
};

// Creates the cgroup directory `dir` (or, with `may_exist`, takes an existing
// one) with mode 0755 whatever the umask: the harness reads its hosts'
// memory.events and pids.events after it dropped to the sandbox uid, and under
// a private umask (a Slurm job's 077) it could not, so a host killed at its
// memory limit read as killed by a signal. Returns 0 or mkdir's errno.
int MakeCgroupDir(const std::string& dir, bool may_exist);

// The cpu.max line for a share of `cpus` (> 0) CPUs: "<quota> 100000", the
// quota in microseconds per 100 ms period, at least the kernel's 1 ms.
std::string CpuMaxValue(double cpus);

// Resident memory (bytes) and process count of `root` and its descendants.
struct TreeUsage {
  uint64_t resident_bytes = 0;
  int processes = 0;
};
TreeUsage MeasureTree(pid_t root);
// User and system CPU time of `root` and its live descendants.
absl::Duration TreeCpuTime(pid_t root);

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_LIMITER_H_
