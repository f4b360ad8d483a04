#ifndef PTXBENCH_SANDBOX_CHILD_H_
#define PTXBENCH_SANDBOX_CHILD_H_

// The child side of SandboxedProcess (process.h): the sandbox's init and its
// payload. Between clone and exec a child of a multi-threaded parent may
// only make system calls (another thread may have held the allocator's lock
// at the moment of the clone), so everything it needs is prepared by the
// parent in a ChildPlan, and these functions only read it.

#include <linux/filter.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/policy.h"

namespace ptxbench::sandbox::internal {

// One message from the child on the status pipe.
struct StatusMessage {
  enum Kind : int32_t {
    kReady = 1,
    kSetupError = 2,
    kExited = 3,
    kSignaled = 4,
    kCpuTimeExceeded = 5,  // before kSignaled: the payload died of its RLIMIT_CPU
  };
  int32_t kind = 0;
  int32_t value = 0;  // errno, exit code or signal
  char text[248] = {};
};

struct PlannedMount {
  Mount::Kind kind;
  std::string source;
  std::string target;  // under the new root, as the child sees it before pivot
  bool source_is_dir = false;
  std::vector<std::string> parents;  // directories to create first, in order
  std::string options;               // kTmpfs: mount options
  bool read_only_after_setup = false;  // kTmpfs: remounted read-only before exec
  std::string view_path;             // the target as seen after pivot_root
};

struct ChildPlan {
  std::string root_dir;    // host directory the view's tmpfs is mounted on
  std::string root_options;  // that tmpfs's mount options (TmpfsOptions)
  std::string empty_file;  // root_dir + "/.ptxb-empty": the source of masks
  std::string old_root;    // root_dir + "/.ptxb-old": for pivot_root
  std::string proc_dir;    // root_dir + "/proc"
  std::vector<PlannedMount> mounts;
  std::string cwd;
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;           // null-terminated views of the above
  std::vector<std::pair<int, int>> fds;    // (payload fd, inherited fd)
  std::vector<std::pair<int, uint64_t>> rlimits;
  bool user_namespace = false;
  uid_t uid = kDefaultUid;
  gid_t gid = kDefaultUid;
  uid_t keeper_uid = kDefaultUid;  // the init's real uid (policy.h)
  bool suspended = false;
  bool loopback = false;  // bring up the network namespace's lo
  // The caller's process (pidfd_open before the clone; -1 where the kernel
  // has none): the init checks it once its parent-death signal is armed for
  // good, so a caller that died before that leaves nothing running.
  int parent_pidfd = -1;
  // The caller's argv and environment strings, which the init's copy of
  // its memory still holds and /proc/1/cmdline and /proc/1/environ would
  // show inside the sandbox (0: unknown): [arg_start, arg_end) and
  // [env_start, env_end) of /proc/self/stat.
  uintptr_t arg_start = 0, arg_end = 0, env_start = 0, env_end = 0;
  std::vector<sock_filter> filter;  // empty: no seccomp
  // Pipe ends (the child closes the parent's).
  int sync_read = -1, sync_write = -1;
  int status_read = -1, status_write = -1;
  int release_read = -1, release_write = -1;
};

// The init: waits for the parent's go, enters a cgroup namespace of its
// own, hides the caller's argv and environment, builds the view, forks the
// payload, reports kReady, drops its privileges (re-arming its parent-death
// signal, which the change of ids cleared) and waits for the payload. Never
// returns.
[[noreturn]] void InitMain(const ChildPlan& plan);

}  // namespace ptxbench::sandbox::internal

#endif  // PTXBENCH_SANDBOX_CHILD_H_
