#ifndef PTXBENCH_SANDBOX_SECCOMP_FILTER_H_
#define PTXBENCH_SANDBOX_SECCOMP_FILTER_H_

// The seccomp filter of every sandbox (policy.h): everything is allowed but
// what would let a process reach outside its sandbox or the kernel's
// attack surface beyond what compilers and CUDA programs need. Denied with
// EPERM:
//  - other processes' memory and state: ptrace, process_vm_readv/writev,
//    kcmp, pidfd_getfd;
//  - the filesystem view and namespaces: mount and the new mount API,
//    umount2, pivot_root, chroot, unshare, setns, clone with any CLONE_NEW*
//    flag (clone3, whose flags a filter cannot read, answers ENOSYS so libc
//    falls back to clone);
//  - new network sockets: socket() of any family but AF_UNIX;
//  - kernel interfaces with a history of escapes or that bypass this filter:
//    bpf, perf_event_open, userfaultfd, io_uring, keyrings, module and kexec
//    loading, open_by_handle_at, and the host-wide knobs
//    (reboot, swap, clock, hostname, syslog, acct, quotas, ioperm/iopl).
// System calls of another architecture (the 32-bit ABI) kill the process.
//
// The filter is compiled in the parent (libseccomp allocates) and installed
// in the child with one system call, which is safe between fork and exec.

#include <linux/filter.h>

#include <vector>

#include "absl/status/statusor.h"

namespace ptxbench::sandbox {

// The compiled BPF program.
absl::StatusOr<std::vector<sock_filter>> CompileSeccompFilter();

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_SECCOMP_FILTER_H_
