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
//  - new network sockets: socket() of any family but AF_UNIX (and AF_INET,
//    AF_INET6, AF_NETLINK with Policy::loopback, whose namespace has only lo);
//  - kernel interfaces with a history of escapes or that bypass this filter:
//    bpf, perf_event_open, userfaultfd, io_uring, keyrings, module and kexec
//    loading, open_by_handle_at, and the host-wide knobs
//    (reboot, swap, clock, hostname, syslog, acct, quotas, ioperm/iopl).
// System calls of another architecture (the 32-bit ABI) kill the process.
//
// Two more rules for processes that run submitted GPU code, where the
// Policy asks (the compiler needs neither):
//  - guard_gpu_object_sharing: ioctl() of the NVIDIA driver's escapes
//    NV_ESC_RM_DUP_OBJECT and NV_ESC_RM_SHARE (type 'F', nr 0x34 and 0x35:
//    the low 16 bits of the request are 0x4634 or 0x4635; the size bits
//    above vary) fails with EPERM, and so does NV_ESC_IOCTL_XFER_CMD (nr
//    0xD3), which wraps any escape in user memory that a filter cannot
//    read. A legacy CUDA IPC handle is opened with RM_DUP_OBJECT of another
//    process's driver object, so a forged handle could reach another
//    process's GPU memory. Measured on the H200, a CUDA
//    program's own work (context creation, allocation, kernel launch, module
//    loading, importing a memory allocation from a file descriptor) issues
//    neither escape: the candidate loses only the ability to open or publish
//    other processes' GPU objects.
//  - deny_exec_memory (W^X for code the process makes itself): memfd_create
//    and memfd_secret; mmap with PROT_EXEC and MAP_ANONYMOUS, or with both
//    PROT_WRITE and PROT_EXEC; mprotect and pkey_mprotect with PROT_EXEC;
//    shmat with SHM_EXEC. File-backed read-execute mappings (how the dynamic
//    loader maps libraries) stay allowed; with the writable mounts noexec
//    (policy.h), the only code the process can map is the view's read-only
//    files. One way around it is left: writes to /proc/self/mem go through
//    page protections unless the kernel is booted with
//    proc_mem.force_override=never (Linux 6.12).
//
// The filter is compiled in the parent (libseccomp allocates) and installed
// in the child with one system call, which is safe between fork and exec.

#include <linux/filter.h>

#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/policy.h"

namespace ptxbench::sandbox {

// The compiled BPF program, with the optional rules `policy` asks for
// (guard_gpu_object_sharing, deny_exec_memory). The caller decides whether
// to install it at all (Policy::seccomp).
absl::StatusOr<std::vector<sock_filter>> CompileSeccompFilter(const Policy& policy);

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_SECCOMP_FILTER_H_
