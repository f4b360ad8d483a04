#include "sandbox/seccomp_filter.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "absl/strings/str_cat.h"

namespace ptxbench::sandbox {
namespace {

// Denied outright (names libseccomp does not know on this system are
// skipped: the kernel then has no such call either, or it is newer than
// the library and stays allowed; see docs/SECURITY.md).
constexpr const char* kDenied[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree",
    "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "keyctl", "add_key", "request_key", "init_module",
    "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "open_by_handle_at", "name_to_handle_at", "reboot", "swapon", "swapoff",
    "syslog", "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "sethostname", "setdomainname", "quotactl", "quotactl_fd", "ioperm", "iopl",
    "lookup_dcookie", "vhangup", "uselib", "_sysctl", "nfsservctl",
    "fanotify_init", "personality",
};

constexpr uint64_t kNamespaceFlags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,
                                        CLONE_NEWNET,  CLONE_NEWIPC, CLONE_NEWUTS,
                                        CLONE_NEWCGROUP};

struct CtxDeleter {
  void operator()(void* ctx) const { seccomp_release(static_cast<scmp_filter_ctx>(ctx)); }
};

absl::Status Check(int rc, absl::string_view what) {
  if (rc == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("seccomp: ", what, ": ", strerror(-rc)));
}

}  // namespace

absl::StatusOr<std::vector<sock_filter>> CompileSeccompFilter() {
  std::unique_ptr<void, CtxDeleter> holder(seccomp_init(SCMP_ACT_ALLOW));
  auto ctx = static_cast<scmp_filter_ctx>(holder.get());
  if (ctx == nullptr) return absl::InternalError("seccomp_init failed");
  // Another architecture's system calls (int 0x80) get the default
  // bad-architecture action, which kills.
  for (const char* name : kDenied) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;
    if (absl::Status s = Check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0), name);
        !s.ok()) {
      return s;
    }
  }
  for (uint64_t flag : kNamespaceFlags) {
    if (absl::Status s = Check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                                SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)),
                               "clone");
        !s.ok()) {
      return s;
    }
  }
  const int clone3 = seccomp_syscall_resolve_name("clone3");
  if (clone3 != __NR_SCMP_ERROR) {
    if (absl::Status s = Check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), clone3, 0), "clone3");
        !s.ok()) {
      return s;
    }
  }
  // SCMP_A0(SCMP_CMP_NE, AF_UNIX), spelled out: the macro leaves datum_b to a
  // missing-initializer warning.
  const scmp_arg_cmp not_unix{.arg = 0, .op = SCMP_CMP_NE, .datum_a = AF_UNIX, .datum_b = 0};
  if (absl::Status s = Check(
          seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, not_unix), "socket");
      !s.ok()) {
    return s;
  }
  // libseccomp writes the program to a descriptor; read it back.
  const int fd = memfd_create("ptxb-seccomp", MFD_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("memfd_create: ", strerror(errno)));
  absl::Status status = Check(seccomp_export_bpf(ctx, fd), "export");
  std::vector<sock_filter> program;
  if (status.ok()) {
    const off_t size = lseek(fd, 0, SEEK_END);
    program.resize(static_cast<size_t>(size) / sizeof(sock_filter));
    if (size <= 0 || pread(fd, program.data(), static_cast<size_t>(size), 0) != size) {
      status = absl::InternalError("seccomp: cannot read the exported filter");
    }
  }
  close(fd);
  if (!status.ok()) return status;
  return program;
}

}  // namespace ptxbench::sandbox
