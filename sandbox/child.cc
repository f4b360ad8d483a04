// Only system calls from here on (child.h says why): no allocation, no
// locks, no stdio.
#include "sandbox/child.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>

#include "process/process.h"

namespace ptxbench::sandbox::internal {
namespace {

// Where Fail() reports: the status pipe, wherever it is at the moment.
int g_status_fd = -1;

void Send(int fd, StatusMessage::Kind kind, int value, const char* what, const char* detail) {
  StatusMessage m;
  m.kind = kind;
  m.value = value;
  size_t n = 0;
  for (const char* part : {what, detail}) {
    if (part == nullptr) continue;
    if (n > 0 && n + 2 < sizeof(m.text)) {
      m.text[n++] = ':';
      m.text[n++] = ' ';
    }
    for (const char* p = part; *p != '\0' && n + 1 < sizeof(m.text); ++p) m.text[n++] = *p;
  }
  (void)!write(fd, &m, sizeof(m));
}

[[noreturn]] void Fail(const ChildPlan&, const char* what, const char* detail = nullptr) {
  Send(g_status_fd, StatusMessage::kSetupError, errno, what, detail);
  _exit(127);
}

// Mount flags that a remount must keep (the kernel refuses to drop flags
// that were locked when the mount came from a more privileged namespace).
unsigned long KeptFlags(const char* path) {
  struct statvfs s;
  if (statvfs(path, &s) != 0) return 0;
  unsigned long f = 0;
  if (s.f_flag & ST_NOSUID) f |= MS_NOSUID;
  if (s.f_flag & ST_NODEV) f |= MS_NODEV;
  if (s.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
  if (s.f_flag & ST_NOATIME) f |= MS_NOATIME;
  if (s.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (s.f_flag & ST_RELATIME) f |= MS_RELATIME;
  if (s.f_flag & ST_RDONLY) f |= MS_RDONLY;
  return f;
}

void CreateFile(const char* path) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
  if (fd >= 0) close(fd);
}

void Bind(const ChildPlan& plan, const PlannedMount& m, unsigned long flags) {
  const char* target = m.target.c_str();
  if (m.source_is_dir) {
    mkdir(target, 0755);
  } else {
    CreateFile(target);
  }
  const char* source = m.kind == Mount::Kind::kMask ? plan.empty_file.c_str() : m.source.c_str();
  // A plain bind shows no mounts below the source (e.g. /sys without its
  // cgroup tree); a user namespace refuses that where the submounts are
  // locked, and gets them all instead.
  if (mount(source, target, nullptr, MS_BIND, nullptr) != 0 &&
      (errno != EINVAL || mount(source, target, nullptr, MS_BIND | MS_REC, nullptr) != 0)) {
    Fail(plan, "bind mount", target);
  }
  if (mount(nullptr, target, nullptr, MS_BIND | MS_REMOUNT | flags | KeptFlags(target), nullptr) !=
      0) {
    Fail(plan, "remount", target);
  }
}

// What the payload can write, it can never run: an attack wrote a vendor
// library it carried into its directory and dlopen()ed it. The view's
// programs and libraries, and the submission's module, are read-only binds,
// which stay executable.
constexpr unsigned long kWritable = MS_NOSUID | MS_NODEV | MS_NOEXEC;

void SetupView(const ChildPlan& plan) {
  const char* root = plan.root_dir.c_str();
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) Fail(plan, "make / private");
  if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, plan.root_options.c_str()) != 0) {
    Fail(plan, "tmpfs root");
  }
  CreateFile(plan.empty_file.c_str());
  for (const PlannedMount& m : plan.mounts) {
    for (const std::string& dir : m.parents) mkdir(dir.c_str(), 0755);
    const char* target = m.target.c_str();
    switch (m.kind) {
      case Mount::Kind::kReadOnly:
      case Mount::Kind::kMask:
        Bind(plan, m, MS_RDONLY | MS_NOSUID | MS_NODEV);
        break;
      case Mount::Kind::kReadWrite:
        Bind(plan, m, kWritable);
        break;
      case Mount::Kind::kReadWriteExec:
        Bind(plan, m, MS_NOSUID | MS_NODEV);
        break;
      case Mount::Kind::kDevice:
        Bind(plan, m, MS_NOSUID | MS_NOEXEC);
        break;
      case Mount::Kind::kTmpfs:
        mkdir(target, 0755);
        if (mount("tmpfs", target, "tmpfs", kWritable, m.options.c_str()) != 0) {
          Fail(plan, "tmpfs", target);
        }
        break;
      case Mount::Kind::kSymlink:
        if (symlink(m.source.c_str(), target) != 0 && errno != EEXIST) Fail(plan, "symlink", target);
        break;
    }
  }
  mkdir(plan.proc_dir.c_str(), 0555);
  if (mount("proc", plan.proc_dir.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    Fail(plan, "mount /proc");
  }
  mkdir(plan.old_root.c_str(), 0700);
  if (syscall(SYS_pivot_root, root, plan.old_root.c_str()) != 0) Fail(plan, "pivot_root");
  if (chdir("/") != 0) Fail(plan, "chdir /");
  // The old root's path inside the new one is the last component.
  const char* old = plan.old_root.c_str() + plan.root_dir.size();
  if (umount2(old, MNT_DETACH) != 0) Fail(plan, "detach the old root");
  rmdir(old);
  // Nothing may be created in the view's own directories (nor in /dev).
  if (mount(nullptr, "/", nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
            nullptr) != 0) {
    Fail(plan, "remount / read-only");
  }
  for (const PlannedMount& m : plan.mounts) {
    if (m.kind != Mount::Kind::kTmpfs || !m.read_only_after_setup) continue;
    if (mount(nullptr, m.view_path.c_str(), nullptr,
              MS_BIND | MS_REMOUNT | MS_RDONLY | KeptFlags(m.view_path.c_str()), nullptr) != 0) {
      Fail(plan, "remount read-only", m.view_path.c_str());
    }
  }
}

// Raw system calls: glibc's wrappers would try to change the ids of every
// thread the parent had (copies that do not exist here) and hang. The init
// keeps `keeper_uid` as its real uid (it acts as `uid`): kill() lets a
// process of that uid end it, and with it the whole sandbox.
void DropIds(const ChildPlan& plan, bool init) {
  if (!plan.user_namespace && syscall(SYS_setgroups, 0, nullptr) != 0) Fail(plan, "setgroups");
  if (syscall(SYS_setresgid, plan.gid, plan.gid, plan.gid) != 0) Fail(plan, "setresgid");
  const uid_t real = init ? plan.keeper_uid : plan.uid;
  if (syscall(SYS_setresuid, real, plan.uid, plan.uid) != 0) Fail(plan, "setresuid");
}

void DropCapabilities(const ChildPlan& plan, bool init = false) {
  // Exec never grants capabilities again (not even to uid 0 in a user
  // namespace), and none are left to pass on.
  prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                               SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED);
  for (int cap = 0; cap <= 63; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  DropIds(plan, init);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0) Fail(plan, "capset");
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Fail(plan, "no_new_privs");
}

// Moves the payload's descriptors into place and closes everything else
// but the two control pipes, which are parked right above them (they are
// close-on-exec).
void ArrangeDescriptors(const ChildPlan& plan, int* status_fd, int* release_fd) {
  int highest = 2;
  for (const auto& [target, source] : plan.fds) highest = target > highest ? target : highest;
  // Out of the way first, so no dup2 below overwrites a source.
  const int park = highest + 3;
  int parked[64];
  const size_t n = plan.fds.size() < 64 ? plan.fds.size() : 64;
  for (size_t i = 0; i < n; ++i) {
    parked[i] = fcntl(plan.fds[i].second, F_DUPFD_CLOEXEC, park + 8);
    if (parked[i] < 0) Fail(plan, "dup");
  }
  *status_fd = fcntl(plan.status_write, F_DUPFD_CLOEXEC, park + 8 + static_cast<int>(n));
  *release_fd = fcntl(plan.release_read, F_DUPFD_CLOEXEC, park + 8 + static_cast<int>(n));
  if (*status_fd < 0 || *release_fd < 0) Fail(plan, "dup");
  g_status_fd = *status_fd;
  bool have_stdin = false;
  for (size_t i = 0; i < n; ++i) {
    if (dup2(parked[i], plan.fds[i].first) < 0) Fail(plan, "dup2");
    have_stdin |= plan.fds[i].first == 0;
  }
  if (!have_stdin) {
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd < 0 || dup2(null_fd, 0) < 0) Fail(plan, "/dev/null as stdin");
    if (null_fd != 0) close(null_fd);
  }
  // Everything between the payload's descriptors and the control pipes.
  const int first_control = *status_fd < *release_fd ? *status_fd : *release_fd;
  const int last_control = *status_fd < *release_fd ? *release_fd : *status_fd;
  syscall(SYS_close_range, highest + 1, first_control - 1, 0);
  syscall(SYS_close_range, first_control + 1, last_control - 1, 0);
  syscall(SYS_close_range, last_control + 1, ~0U, 0);
  for (int fd = 0; fd <= highest; ++fd) {
    bool wanted = fd == 0;
    for (size_t i = 0; i < n; ++i) wanted |= plan.fds[i].first == fd;
    if (!wanted) close(fd);
  }
}

// Signals as a freshly started program has them (the caller's thread may
// block or ignore some; exec keeps both), but for the stop signals, which it
// ignores: a sandbox ends by itself or at its owner's SIGKILL (its deadline,
// its limits, the namespace's end), not at a SIGTERM sent to every process
// of a Slurm job step, which would end a build or a measurement midway and
// read as the kernel's fault. They are ignored before the mask is lifted (a
// worker blocks them in every thread), so that none arrives in between.
void ResetSignals() {
  process::IgnoreStopSignals();
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP && !process::IsStopSignal(sig)) signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

[[noreturn]] void PayloadMain(const ChildPlan& plan) {
  setsid();
  ResetSignals();
  int status_fd = -1, release_fd = -1;
  ArrangeDescriptors(plan, &status_fd, &release_fd);
  for (const auto& [resource, value] : plan.rlimits) {
    rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    // The kernel ends a process at its soft CPU limit with SIGXCPU, which
    // names the limit, and at the hard one with a plain SIGKILL: the hard
    // limit is a second later, for a process that catches SIGXCPU.
    if (resource == RLIMIT_CPU && value < RLIM_INFINITY - 1) ++limit.rlim_max;
    setrlimit(resource, &limit);
  }
  DropCapabilities(plan);
  if (chdir(plan.cwd.c_str()) != 0) Fail(plan, "chdir", plan.cwd.c_str());
  if (plan.suspended) {
    char go = 0;
    if (read(release_fd, &go, 1) != 1) _exit(125);  // the caller gave up on it
  }
  if (!plan.filter.empty()) {
    sock_fprog program{static_cast<unsigned short>(plan.filter.size()),
                       const_cast<sock_filter*>(plan.filter.data())};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) Fail(plan, "seccomp");
  }
  execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  Send(status_fd, StatusMessage::kSetupError, errno, "exec", plan.argv[0]);
  _exit(127);
}

// Whether the payload that ended with `status` was killed by its RLIMIT_CPU:
// SIGXCPU at the soft limit, or the kernel's SIGKILL at the hard one, a
// second later (PayloadMain). That SIGKILL is told from another (of its own
// making: the caller's kills take the init first) by the CPU time used, as
// wait4 reports it (its own, and that of the children it waited for): past
// the soft limit. The kernel counts in clock ticks and wait4 precisely, so
// the two differ by a few percent; the second between the limits covers it.
bool CpuLimitKilled(const ChildPlan& plan, int status, const rusage& usage) {
  if (!WIFSIGNALED(status)) return false;
  if (WTERMSIG(status) == SIGXCPU) return true;
  if (WTERMSIG(status) != SIGKILL) return false;
  uint64_t limit_s = RLIM_INFINITY;
  for (const auto& [resource, value] : plan.rlimits) {
    if (resource == RLIMIT_CPU) limit_s = value;  // the last one set wins
  }
  if (limit_s >= UINT64_MAX / 1000000) return false;  // none, or never reached
  const uint64_t used_us =
      static_cast<uint64_t>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000 +
      static_cast<uint64_t>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  return used_us >= limit_s * 1000000;
}

// What /proc/1/cmdline shows inside the sandbox, with its NUL.
constexpr char kInitName[] = "ptxbench-init";

// The init is a copy of its caller (the gateway, a worker, a test), argv and
// environment strings included, and /proc/1/cmdline is readable by every
// process of the sandbox (it needs no ptrace access, unlike environ): an
// agent read the gateway's scheduler address and token-file path there.
// Both areas are zeroed, and the name written where the arguments were:
// when the last byte of their area is not NUL, the kernel shows them only
// up to the first NUL (the convention of setproctitle), so /proc/1/cmdline
// reads exactly the name, with no privilege needed (PR_SET_MM would need
// CAP_SYS_RESOURCE of the host, which a container's root may lack).
void HideCallersArguments(const ChildPlan& plan) {
  for (const auto& [start, end] :
       {std::pair{plan.arg_start, plan.arg_end}, std::pair{plan.env_start, plan.env_end}}) {
    // The kernel's ARG_MAX-bounded area; anything else is a misread.
    if (start == 0 || end <= start || end - start > (64u << 20)) continue;
    for (auto* p = reinterpret_cast<volatile char*>(start); p < reinterpret_cast<char*>(end); ++p) {
      *p = 0;
    }
  }
  if (plan.arg_start != 0 && plan.arg_end > plan.arg_start && plan.env_end >= plan.env_start &&
      plan.arg_end - plan.arg_start <= (64u << 20)) {
    const uintptr_t size = plan.arg_end - plan.arg_start;
    // The kernel reads on into the environment's area when it follows.
    const uintptr_t room = plan.env_start == plan.arg_end ? plan.env_end - plan.arg_start : size;
    if (room >= sizeof(kInitName)) {
      auto* area = reinterpret_cast<volatile char*>(plan.arg_start);
      for (size_t i = 0; i < sizeof(kInitName); ++i) area[i] = kInitName[i];
      if (size > sizeof(kInitName)) area[size - 1] = ' ';
    }
  }
  prctl(PR_SET_NAME, kInitName, 0, 0, 0);
}

// Closes every descriptor but `a` and `b` (either may be -1).
void CloseAllBut(int a, int b) {
  const int low = a < b ? a : b, high = a < b ? b : a;
  int next = 0;
  for (int keep : {low, high}) {
    if (keep < 0) continue;
    if (keep > next) syscall(SYS_close_range, next, keep - 1, 0);
    next = keep + 1;
  }
  syscall(SYS_close_range, next, ~0U, 0);
}

// lo of the sandbox's own network namespace (Policy::loopback), while the
// init still has its capabilities there.
void BringUpLoopback(const ChildPlan& plan) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Fail(plan, "socket for lo");
  ifreq ifr{};
  memcpy(ifr.ifr_name, "lo", 3);
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0) Fail(plan, "reading lo's flags");
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0) Fail(plan, "bringing up lo");
  close(fd);
}

}  // namespace

void InitMain(const ChildPlan& plan) {
  g_status_fd = plan.status_write;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  close(plan.sync_write);
  close(plan.status_read);
  close(plan.release_write);
  char go = 0;
  if (read(plan.sync_read, &go, 1) != 1) _exit(0);  // the caller gave up
  close(plan.sync_read);
  // The caller has put the init in its cgroup (Limiter::Attach) by now: that
  // cgroup is the root of what the sandbox sees in /proc/self/cgroup, so no
  // host cgroup path (a service's name, a Slurm job's id) shows inside.
  if (unshare(CLONE_NEWCGROUP) != 0) Fail(plan, "cgroup namespace");
  HideCallersArguments(plan);
  // The view's directories must be searchable by the sandbox uid whatever
  // umask the caller runs under (a Slurm job's 077 made them root's alone, and
  // every exec in the view failed); the payload starts with the same 022.
  umask(022);
  SetupView(plan);
  sethostname("sandbox", 7);
  if (plan.loopback) BringUpLoopback(plan);
  // The view is built: ready before the payload exists, so that a failure of
  // the payload's own setup (chdir, seccomp, exec) always comes after it and
  // is the run's setup_error, never a failed Start (they share one pipe).
  Send(plan.status_write, StatusMessage::kReady, 0, nullptr, nullptr);
  // A raw fork: glibc's would take locks the parent's other threads may
  // have held at the moment of the clone.
  const pid_t payload = static_cast<pid_t>(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
  if (payload < 0) Fail(plan, "fork");
  if (payload == 0) PayloadMain(plan);
  close(plan.release_read);
  // The init keeps only its status pipe, and no privilege.
  CloseAllBut(plan.status_write, plan.parent_pidfd);
  DropCapabilities(plan, /*init=*/true);
  // The change of ids cleared the parent-death signal (and made the init
  // dumpable again where fs.suid_dumpable says so): armed again, the init,
  // and with it everything in the namespace, dies with the thread that
  // started it. A caller that died before this line sent no signal: its
  // pidfd says so. The init's memory is a copy of its caller's (a gateway's
  // keys): no process may read it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  prctl(PR_SET_DUMPABLE, 0);
  if (plan.parent_pidfd >= 0) {
    pollfd parent{plan.parent_pidfd, POLLIN, 0};
    if (poll(&parent, 1, 0) > 0) _exit(0);  // it exited
    close(plan.parent_pidfd);
  }
  while (true) {
    int status = 0;
    rusage usage{};
    const pid_t pid = wait4(-1, &status, 0, &usage);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) _exit(0);
    if (pid != payload) continue;  // an orphan of the payload's
    if (CpuLimitKilled(plan, status, usage)) {
      Send(plan.status_write, StatusMessage::kCpuTimeExceeded, 0, nullptr, nullptr);
    }
    if (WIFEXITED(status)) {
      Send(plan.status_write, StatusMessage::kExited, WEXITSTATUS(status), nullptr, nullptr);
    } else {
      Send(plan.status_write, StatusMessage::kSignaled, WTERMSIG(status), nullptr, nullptr);
    }
    _exit(0);  // the kernel kills whatever is left in the namespace
  }
}

}  // namespace ptxbench::sandbox::internal
