#ifndef PTXBENCH_SANDBOX_POLICY_H_
#define PTXBENCH_SANDBOX_POLICY_H_

// What a sandboxed process may see and use (docs/SECURITY.md has the threat
// model). Every process that compiles or runs submitted code gets one:
//  - its own PID, network, mount, IPC, UTS and cgroup namespaces: it sees no
//    other process, has no network (not even loopback, unless `loopback`)
//    and no host cgroup path, and everything it starts dies with it, and
//    with its caller (sandboxed_process.h);
//  - a filesystem view built from `mounts` on an empty tmpfs root, so any
//    path not listed does not exist; only kReadWrite and kTmpfs mounts are
//    writable, and nothing on them can be executed or mapped executable;
//  - its own uid when the caller is root (`uid`), else a user namespace
//    that maps it to the caller's uid;
//  - no capabilities, no_new_privs, and a seccomp filter (seccomp_filter.h),
//    with the GPU candidates' rules where asked;
//  - memory and process limits: cgroup v2 memory.max / pids.max where the
//    caller gives a cgroup parent, else a watchdog over its processes; a
//    CPU share (cpu.max) with a cgroup parent only; CPU time by RLIMIT_CPU;
//  - exactly the environment in `env` and the descriptors in `fds`.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ptxbench::sandbox {

// The defaults of every sandbox, owned here: each struct that carries sandbox
// settings down to a Policy (the worker's flags, its compile and GPU
// evaluation settings, the runner's job, an agent session) starts from these.
// The uid (and gid) the payload runs as when the caller is root: nobody.
inline constexpr uid_t kDefaultUid = 65534;
// The memory limit of a sandbox that compiles or runs submitted code, or that
// holds an agent's session.
inline constexpr uint64_t kDefaultMemoryBytes = uint64_t{8} << 30;
// The process limit of a sandbox that compiles or runs submitted code.
inline constexpr int kDefaultMaxProcesses = 256;

struct Mount {
  enum class Kind {
    kReadOnly,   // bind `source` read-only (nosuid, nodev)
    kReadWrite,  // bind `source` writable (nosuid, nodev, noexec)
    // Bind `source` writable AND executable (nosuid, nodev): only for the
    // cache of a JIT (Triton's kernels and launchers) in a sandbox that
    // times nothing; the sandbox that times binds the same cache read-only
    // (worker/runner/hosts/isolation.h).
    kReadWriteExec,
    kDevice,     // bind the device node `source` (nosuid)
    kTmpfs,      // an empty writable tmpfs (`source` unused), size-limited,
                 // noexec
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
  uid_t uid = kDefaultUid;
  gid_t gid = kDefaultUid;
  // Use a user namespace even when the caller is root (tests of that path).
  bool force_user_namespace = false;
  // The uid that may still end the sandbox when the caller is root and
  // drops to another uid than `uid` after starting it (the harness, whose
  // candidate host runs as a uid of its own): the init's real uid, so kill()
  // lets that uid end it, and everything in it. The init only waits; the
  // payload runs with every id `uid`. kSameUid: `uid`.
  static constexpr uid_t kSameUid = static_cast<uid_t>(-1);
  uid_t keeper_uid = kSameUid;

  // Agent sessions (docs/AGENTS.md): the network namespace's own loopback
  // is up, and sockets of AF_INET, AF_INET6 and AF_NETLINK may be made (a
  // CLI talks to its model through a relay on 127.0.0.1; Node lists
  // interfaces over netlink). The namespace has no other interface, so
  // nothing outside the sandbox is reachable over IP.
  bool loopback = false;

  bool seccomp = true;
  // Seccomp rules for processes that run submitted GPU code (the candidate
  // host); the compiler needs neither (seccomp_filter.h has the details).
  // No opening or publishing of other processes' GPU objects: the NVIDIA
  // driver's RM_DUP_OBJECT and RM_SHARE escapes fail with EPERM.
  bool guard_gpu_object_sharing = false;
  // W^X for code the process makes itself: no memfd, no anonymous or
  // writable executable mapping, no mprotect to executable. With noexec
  // writable mounts, the only code it can map is the view's read-only files
  // (but for /proc/self/mem: seccomp_filter.h).
  bool deny_exec_memory = false;
  // Limits: 0 = none. Enforced by cgroup v2 when `cgroup_parent` is set (a
  // cgroup directory the caller may create children in, with the memory
  // and pids controllers enabled), by the caller's watchdog otherwise.
  uint64_t memory_bytes = 0;
  int max_processes = 0;
  // At most this many CPUs' worth of time (cgroup v2 cpu.max, "cpus*100000
  // 100000"). Only with a cgroup parent whose cpu controller can be enabled;
  // otherwise not enforced at all (ProbeProtections says so). For CPU time,
  // use RLIMIT_CPU in `rlimits`.
  double cpus = 0;
  std::string cgroup_parent;
  // setrlimit(resource, value) in the payload (soft = hard; but RLIMIT_CPU's
  // hard limit is one second above, so that the limit ends a process with
  // SIGXCPU, which names it: Outcome::cpu_time_exceeded).
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
  // Killed by its RLIMIT_CPU: it died of SIGXCPU (the soft limit), or of
  // SIGKILL once its CPU time had passed the limit (the kernel's kill at the
  // hard limit, a second later, of a process that caught SIGXCPU).
  bool cpu_time_exceeded = false;
  // The sandbox itself could not be set up (an infrastructure problem, not
  // the payload's): what failed.
  std::string setup_error;
  uint64_t peak_memory_bytes = 0;  // as the limiter saw it (0 if unknown)
};

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_POLICY_H_
