#ifndef PTXBENCH_SANDBOX_POLICY_H_
#define PTXBENCH_SANDBOX_POLICY_H_

// What a sandboxed process may see and use (docs/SECURITY.md has the threat
// model). Every process that compiles or runs submitted code gets one:
//  - its own PID, network, mount, IPC and UTS namespaces: it sees no other
//    process, has no network (not even loopback), and everything it starts
//    dies with it;
//  - a filesystem view built from `mounts` on an empty tmpfs root, so any
//    path not listed does not exist; only kReadWrite mounts are writable;
//  - its own uid when the caller is root (`uid`), else a user namespace
//    that maps it to the caller's uid;
//  - no capabilities, no_new_privs, and a seccomp filter (seccomp_filter.h);
//  - memory and process limits: cgroup v2 memory.max / pids.max where the
//    caller gives a cgroup parent, else a watchdog over its processes;
//  - exactly the environment in `env` and the descriptors in `fds`.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ptxbench::sandbox {

struct Mount {
  enum class Kind {
    kReadOnly,   // bind `source` read-only (nosuid, nodev)
    kReadWrite,  // bind `source` writable (nosuid, nodev)
    kDevice,     // bind the device node `source` (nosuid)
    kTmpfs,      // an empty writable tmpfs (`source` unused), size-limited
    kSymlink,    // a symlink at `target` pointing to `source`
    kMask,       // an empty read-only file over `target` (hides what a
                 // read-only bind above it brought in)
  };
  Kind kind = Kind::kReadOnly;
  std::string source;
  std::string target;  // absolute path inside the view
};

struct Policy {
  // The filesystem view, applied in order (a parent before what it holds).
  // /proc (this PID namespace's) and /dev/null are always there.
  std::vector<Mount> mounts;
  std::string cwd = "/";
  std::vector<std::string> env;  // the whole environment, KEY=VALUE

  // The uid/gid the payload runs as when the caller is root. Ignored (the
  // caller's own ids, through a user namespace) otherwise.
  uid_t uid = 65534;
  gid_t gid = 65534;
  // Use a user namespace even when the caller is root (tests of that path).
  bool force_user_namespace = false;

  bool seccomp = true;
  // Limits: 0 = none. Enforced by cgroup v2 when `cgroup_parent` is set (a
  // cgroup directory the caller may create children in, with the memory
  // and pids controllers enabled), by the caller's watchdog otherwise.
  uint64_t memory_bytes = 0;
  int max_processes = 0;
  std::string cgroup_parent;
  // setrlimit(resource, value) in the payload (soft = hard).
  std::vector<std::pair<int, uint64_t>> rlimits;
};

// How a sandboxed process ended.
struct Outcome {
  bool exited = false;  // exit_code is valid
  int exit_code = -1;
  int term_signal = 0;          // when !exited and the payload was signalled
  bool timed_out = false;       // killed at the caller's deadline
  bool memory_exceeded = false; // killed for going over memory_bytes
  bool processes_exceeded = false;  // hit max_processes (killed by the watchdog,
                                    // or refused forks under pids.max)
  // The sandbox itself could not be set up (an infrastructure problem, not
  // the payload's): what failed.
  std::string setup_error;
  uint64_t peak_memory_bytes = 0;  // as the limiter saw it (0 if unknown)
};

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_POLICY_H_
