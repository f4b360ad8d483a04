#ifndef PTXBENCH_PROCESS_PROCESS_H_
#define PTXBENCH_PROCESS_PROCESS_H_

// The one fork/exec of ptxbench: the compiler's tools, the runner's harness,
// the children of `ptxbench up` and the processes of cross-process tests all
// start here. (The sandbox makes its own children, born in new namespaces,
// and shares the output capture of output_collector.h.)
//
// Before exec the child:
//  - leads a process group of its own unless told otherwise, so that a
//    deadline or a stop reaches its own children too, and a Ctrl-C in the
//    terminal reaches only the parent;
//  - reads /dev/null and writes stdout (and stderr) where SpawnOptions says;
//  - holds no other descriptor of the parent's: gRPC's sockets are not
//    close-on-exec, and a child holding one keeps it registered in the
//    parent's epoll set, which stalls later connections;
//  - starts with no signal blocked, its resource limits set, in its cwd.
// Between fork and exec the child only makes system calls (another thread
// of the parent may have held the allocator's lock at the fork), so all it
// needs is prepared before the fork.

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace ptxbench::process {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the program's path (no PATH search)
  std::string cwd;                // empty: the parent's
  // The child's whole environment ("KEY=VALUE"); unset: the parent's.
  std::optional<std::vector<std::string>> environment;
  // setrlimit(resource, {value, value}) in the child before exec.
  std::vector<std::pair<int, uint64_t>> rlimits;

  // Where stdout goes: the parent's stdout; a pipe the parent reads through
  // Process::output_fd(); or `output_fd`, a descriptor the caller keeps
  // owning (a log file opened for appending).
  enum class Output { kInherit, kCapture, kDescriptor };
  Output output = Output::kInherit;
  int output_fd = -1;
  bool stderr_with_output = true;  // false: stderr is the parent's

  bool new_process_group = true;
  // Sent to the child when the thread that spawned it ends
  // (PR_SET_PDEATHSIG); 0: none.
  int parent_death_signal = 0;
  // The child ignores the stop signals (IgnoreStopSignals) and, unless
  // parent_death_signal says otherwise, gets SIGKILL when its spawning
  // thread ends: it must not outlive its owner.
  bool ignore_stop_signals = false;
};

// SIGINT, SIGTERM, SIGHUP and SIGQUIT: what a terminal or a batch system
// sends a whole process tree to stop it.
bool IsStopSignal(int sig);
// The same signals as a set (sigprocmask, sigtimedwait).
sigset_t StopSignalSet();

// Sets the stop signals (IsStopSignal) to be ignored; exec and fork keep
// them so. Async-signal-safe (for a child between fork and exec). For the
// processes that evaluate a kernel: they end by themselves or at their
// owner's SIGKILL, never at a stop signal meant for the whole tree they run
// in (Slurm's scancel signals every process of a job step), which would
// otherwise end a measurement midway and read as the kernel's fault.
void IgnoreStopSignals();

// How a child ended.
struct ExitStatus {
  bool exited = false;  // exit() ended it; exit_code is valid
  int exit_code = -1;
  int term_signal = 0;  // the signal that ended it, when !exited

  static ExitStatus FromWaitStatus(int wait_status);
  bool ok() const { return exited && exit_code == 0; }
  // As a shell reports it: the exit code, or 128 + the signal.
  int ShellCode() const;
  // "exited with code 2", "was killed by signal 9 (Killed)".
  std::string Describe() const;
};

// A child process, owned: the destructor kills (SIGKILL, to its group) and
// reaps one that was never reaped. Move-only; thread-compatible (one owner).
class Process {
 public:
  // kFailedPrecondition, naming the program and the reason, when it cannot
  // be executed (missing, not executable, a cwd that does not exist);
  // kInvalidArgument for an empty argv; kResourceExhausted when fork fails;
  // kInternal when no pipe or /dev/null can be opened.
  static absl::StatusOr<Process> Spawn(const SpawnOptions& options);

  Process() = default;  // no child
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  ~Process();

  // Also the process group's id when the child leads one. Kept after the
  // child is reaped.
  pid_t pid() const { return pid_; }
  // Spawned and not reaped yet (it may have ended: see Ended).
  bool running() const { return pid_ > 0 && !reaped_; }
  // The read end of the captured output (Output::kCapture), non-blocking;
  // -1 otherwise. Owned by the Process.
  int output_fd() const { return output_fd_; }

  // To the child alone.
  void Signal(int signal) const;
  // To the child's process group, or to the child alone if it leads none.
  void SignalGroup(int signal) const;

  // Whether the child has ended, without reaping it: until it is reaped its
  // pid, and so its group id, cannot be reused, so the group can still be
  // signalled safely.
  bool Ended() const;
  // Reaps the child if it has ended; nullopt while it runs.
  std::optional<ExitStatus> TryWait();
  // Waits for the child to end and reaps it. A default ExitStatus (exit code
  // -1) when there is no child to wait for.
  ExitStatus Wait();
  // SIGKILL to the group (or the child), then Wait.
  ExitStatus Kill();

 private:
  void Reset();

  pid_t pid_ = -1;
  bool reaped_ = false;
  bool group_ = false;
  int output_fd_ = -1;
};

}  // namespace ptxbench::process

#endif  // PTXBENCH_PROCESS_PROCESS_H_
