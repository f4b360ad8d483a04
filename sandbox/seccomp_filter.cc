#include "sandbox/seccomp_filter.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <unistd.h>

#include <initializer_list>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

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

// (argument `arg` & mask) == value. Spelled out: the SCMP_A* macros leave
// fields to a missing-initializer warning.
scmp_arg_cmp Masked(unsigned arg, uint64_t mask, uint64_t value) {
  return {.arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = mask, .datum_b = value};
}

// The call `name` fails with `error` when every comparison holds; skipped
// where libseccomp does not know the name (see kDenied).
absl::Status Refuse(scmp_filter_ctx ctx, const char* name, int error,
                    std::initializer_list<scmp_arg_cmp> args = {}) {
  const int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return absl::OkStatus();
  const std::vector<scmp_arg_cmp> a(args);
  return Check(seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(static_cast<uint32_t>(error)), nr,
                                      static_cast<unsigned>(a.size()), a.data()),
               name);
}

// The NVIDIA driver's escapes that open or publish another process's GPU
// objects (seccomp_filter.h says why): NV_ESC_RM_DUP_OBJECT, NV_ESC_RM_SHARE.
// RM_DUP_OBJECT, RM_SHARE, and IOCTL_XFER_CMD (0xD3), which carries another
// escape's number in user memory, where a filter cannot read it (a CUDA
// program's own work was not seen to issue it either).
constexpr uint64_t kGpuObjectSharingEscapes[] = {0x4634, 0x4635, 0x46D3};

absl::Status AddGpuObjectSharingRules(scmp_filter_ctx ctx) {
  for (uint64_t escape : kGpuObjectSharingEscapes) {
    PTXB_RETURN_IF_ERROR(Refuse(ctx, "ioctl", EPERM, {Masked(1, 0xFFFF, escape)}));
  }
  return absl::OkStatus();
}

absl::Status AddExecMemoryRules(scmp_filter_ctx ctx) {
  PTXB_RETURN_IF_ERROR(Refuse(ctx, "memfd_create", EPERM));
  PTXB_RETURN_IF_ERROR(Refuse(ctx, "memfd_secret", EPERM));
  PTXB_RETURN_IF_ERROR(
      Refuse(ctx, "mmap", EPERM,
             {Masked(2, PROT_EXEC, PROT_EXEC), Masked(3, MAP_ANONYMOUS, MAP_ANONYMOUS)}));
  constexpr uint64_t kWriteExec = PROT_WRITE | PROT_EXEC;
  PTXB_RETURN_IF_ERROR(Refuse(ctx, "mmap", EPERM, {Masked(2, kWriteExec, kWriteExec)}));
  for (const char* name : {"mprotect", "pkey_mprotect"}) {
    PTXB_RETURN_IF_ERROR(Refuse(ctx, name, EPERM, {Masked(2, PROT_EXEC, PROT_EXEC)}));
  }
  return Refuse(ctx, "shmat", EPERM, {Masked(2, SHM_EXEC, SHM_EXEC)});
}

}  // namespace

absl::StatusOr<std::vector<sock_filter>> CompileSeccompFilter(const Policy& policy) {
  std::unique_ptr<void, CtxDeleter> holder(seccomp_init(SCMP_ACT_ALLOW));
  auto ctx = static_cast<scmp_filter_ctx>(holder.get());
  if (ctx == nullptr) return absl::InternalError("seccomp_init failed");
  // Another architecture's system calls (int 0x80) get the default
  // bad-architecture action, which kills.
  for (const char* name : kDenied) PTXB_RETURN_IF_ERROR(Refuse(ctx, name, EPERM));
  for (uint64_t flag : kNamespaceFlags) {
    PTXB_RETURN_IF_ERROR(Refuse(ctx, "clone", EPERM, {Masked(0, flag, flag)}));
  }
  PTXB_RETURN_IF_ERROR(Refuse(ctx, "clone3", ENOSYS));
  if (policy.loopback) {
    // Every family but AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK.
    for (int family = 0; family < AF_MAX; ++family) {
      if (family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK) {
        continue;
      }
      const scmp_arg_cmp is{.arg = 0, .op = SCMP_CMP_EQ, .datum_a = static_cast<uint64_t>(family),
                            .datum_b = 0};
      PTXB_RETURN_IF_ERROR(Refuse(ctx, "socket", EPERM, {is}));
    }
    const scmp_arg_cmp above{.arg = 0, .op = SCMP_CMP_GE, .datum_a = AF_MAX, .datum_b = 0};
    PTXB_RETURN_IF_ERROR(Refuse(ctx, "socket", EPERM, {above}));
  } else {
    const scmp_arg_cmp not_unix{.arg = 0, .op = SCMP_CMP_NE, .datum_a = AF_UNIX, .datum_b = 0};
    PTXB_RETURN_IF_ERROR(Refuse(ctx, "socket", EPERM, {not_unix}));
  }
  if (policy.guard_gpu_object_sharing) PTXB_RETURN_IF_ERROR(AddGpuObjectSharingRules(ctx));
  if (policy.deny_exec_memory) PTXB_RETURN_IF_ERROR(AddExecMemoryRules(ctx));
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
