#include "process/process.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace ptxbench::process {
namespace {

// What the child reports on its error pipe when it cannot exec.
struct ChildError {
  enum Stage : int32_t { kStdio = 1, kCwd = 2, kExec = 3 };
  int32_t stage = 0;
  int32_t err = 0;
};

// Everything the child needs, prepared before the fork.
struct ChildPlan {
  char* const* argv;
  char* const* envp;  // nullptr: the parent's environment
  const char* cwd;    // nullptr: the parent's
  const std::vector<std::pair<int, uint64_t>>* rlimits;
  int stdin_fd;
  int output_fd;  // -1: stdout (and stderr) inherited
  bool stderr_with_output;
  bool new_group;
  int death_signal;
  bool ignore_stop_signals;
  pid_t parent;
  int max_fd;
  int error_fd;  // close-on-exec: the parent reads end of file once exec worked
};

[[noreturn]] void Fail(const ChildPlan& plan, ChildError::Stage stage) {
  const ChildError e{stage, errno};
  (void)!write(plan.error_fd, &e, sizeof(e));
  _exit(127);
}

[[noreturn]] void ChildMain(const ChildPlan& plan) {
  if (plan.new_group) setpgid(0, 0);
  if (plan.death_signal != 0) {
    prctl(PR_SET_PDEATHSIG, plan.death_signal);
    if (getppid() != plan.parent) _exit(1);  // the parent died before prctl
  }
  if (dup2(plan.stdin_fd, STDIN_FILENO) < 0) Fail(plan, ChildError::kStdio);
  if (plan.output_fd >= 0) {
    if (dup2(plan.output_fd, STDOUT_FILENO) < 0) Fail(plan, ChildError::kStdio);
    if (plan.stderr_with_output && dup2(plan.output_fd, STDERR_FILENO) < 0) {
      Fail(plan, ChildError::kStdio);
    }
  }
  // Close-on-exec rather than closed: the error pipe must stay open until
  // the exec.
  if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < plan.max_fd; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  // Ignored before the mask is lifted: the executors block the stop signals
  // in every thread, so none arrives in between.
  if (plan.ignore_stop_signals) IgnoreStopSignals();
  // The parent's thread may block signals; exec keeps the mask.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (const auto& [resource, value] : *plan.rlimits) {
    rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    setrlimit(resource, &limit);
  }
  if (plan.cwd != nullptr && chdir(plan.cwd) != 0) Fail(plan, ChildError::kCwd);
  if (plan.envp != nullptr) {
    execve(plan.argv[0], plan.argv, plan.envp);
  } else {
    execv(plan.argv[0], plan.argv);
  }
  Fail(plan, ChildError::kExec);
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

std::string Describe(const ChildError& e, const SpawnOptions& options) {
  switch (e.stage) {
    case ChildError::kCwd:
      return absl::StrCat("cannot execute ", options.argv[0], ": cannot enter ", options.cwd, ": ",
                          strerror(e.err));
    case ChildError::kStdio:
      return absl::StrCat("cannot execute ", options.argv[0],
                          ": cannot set up stdin/stdout: ", strerror(e.err));
    default:
      return absl::StrCat("cannot execute ", options.argv[0], ": ", strerror(e.err));
  }
}

}  // namespace

namespace {
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
}  // namespace

bool IsStopSignal(int sig) {
  for (int s : kStopSignals) {
    if (s == sig) return true;
  }
  return false;
}

sigset_t StopSignalSet() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kStopSignals) sigaddset(&set, s);
  return set;
}

void IgnoreStopSignals() {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  for (int sig : kStopSignals) sigaction(sig, &ignore, nullptr);
}

ExitStatus ExitStatus::FromWaitStatus(int wait_status) {
  ExitStatus s;
  if (WIFEXITED(wait_status)) {
    s.exited = true;
    s.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    s.term_signal = WTERMSIG(wait_status);
  }
  return s;
}

int ExitStatus::ShellCode() const {
  if (exited) return exit_code;
  return term_signal != 0 ? 128 + term_signal : -1;
}

std::string ExitStatus::Describe() const {
  if (exited) return absl::StrCat("exited with code ", exit_code);
  if (term_signal != 0) {
    return absl::StrCat("was killed by signal ", term_signal, " (", strsignal(term_signal), ")");
  }
  return "did not end";
}

absl::StatusOr<Process> Process::Spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("cannot spawn a process: empty argv");
  if (options.output == SpawnOptions::Output::kDescriptor && options.output_fd < 0) {
    return absl::InvalidArgumentError(
        "cannot spawn a process: Output::kDescriptor without a descriptor");
  }
  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (options.environment) {
    for (const std::string& e : *options.environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }

  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int error_pipe[2] = {-1, -1};
  int output_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int* fd : {&null_fd, &error_pipe[0], &error_pipe[1], &output_pipe[0], &output_pipe[1]}) {
      CloseFd(fd);
    }
  };
  if (null_fd < 0 || pipe2(error_pipe, O_CLOEXEC) != 0 ||
      (options.output == SpawnOptions::Output::kCapture && pipe2(output_pipe, O_CLOEXEC) != 0)) {
    const int err = errno;
    close_all();
    return absl::InternalError(
        absl::StrCat("cannot spawn ", options.argv[0], ": no pipe or /dev/null: ", strerror(err)));
  }
  ChildPlan plan{};
  plan.argv = argv.data();
  plan.envp = options.environment ? envp.data() : nullptr;
  plan.cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  plan.rlimits = &options.rlimits;
  plan.stdin_fd = null_fd;
  switch (options.output) {
    case SpawnOptions::Output::kInherit:
      plan.output_fd = -1;
      break;
    case SpawnOptions::Output::kCapture:
      plan.output_fd = output_pipe[1];
      break;
    case SpawnOptions::Output::kDescriptor:
      plan.output_fd = options.output_fd;
      break;
  }
  plan.stderr_with_output = options.stderr_with_output;
  plan.new_group = options.new_process_group;
  plan.death_signal = options.parent_death_signal != 0 ? options.parent_death_signal
                      : options.ignore_stop_signals     ? SIGKILL
                                                        : 0;
  plan.ignore_stop_signals = options.ignore_stop_signals;
  plan.parent = getpid();
  plan.max_fd = static_cast<int>(sysconf(_SC_OPEN_MAX));
  plan.error_fd = error_pipe[1];

  const pid_t pid = fork();
  if (pid == 0) ChildMain(plan);
  const int fork_errno = errno;
  CloseFd(&null_fd);
  CloseFd(&error_pipe[1]);
  CloseFd(&output_pipe[1]);
  if (pid < 0) {
    close_all();
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot spawn ", options.argv[0], ": fork: ", strerror(fork_errno)));
  }
  // Also from the parent, so the group exists before anyone signals it.
  if (options.new_process_group) setpgid(pid, pid);

  Process process;
  process.pid_ = pid;
  process.group_ = options.new_process_group;
  process.output_fd_ = output_pipe[0];
  output_pipe[0] = -1;
  if (process.output_fd_ >= 0) {
    fcntl(process.output_fd_, F_SETFL, fcntl(process.output_fd_, F_GETFL) | O_NONBLOCK);
  }
  // End of file here means the exec happened.
  ChildError error;
  ssize_t n;
  do {
    n = read(error_pipe[0], &error, sizeof(error));
  } while (n < 0 && errno == EINTR);
  CloseFd(&error_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(error))) {
    process.Wait();
    return absl::FailedPreconditionError(Describe(error, options));
  }
  return process;
}

Process::Process(Process&& other) noexcept
    : pid_(other.pid_), reaped_(other.reaped_), group_(other.group_), output_fd_(other.output_fd_) {
  other.pid_ = -1;
  other.output_fd_ = -1;
}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    Reset();
    pid_ = other.pid_;
    reaped_ = other.reaped_;
    group_ = other.group_;
    output_fd_ = other.output_fd_;
    other.pid_ = -1;
    other.output_fd_ = -1;
  }
  return *this;
}

Process::~Process() { Reset(); }

void Process::Reset() {
  if (running()) Kill();
  CloseFd(&output_fd_);
  pid_ = -1;
}

void Process::Signal(int signal) const {
  if (running()) kill(pid_, signal);
}

void Process::SignalGroup(int signal) const {
  if (!running()) return;
  if (!group_ || kill(-pid_, signal) != 0) kill(pid_, signal);
}

bool Process::Ended() const {
  if (!running()) return true;
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid_;
}

std::optional<ExitStatus> Process::TryWait() {
  if (!running()) return std::nullopt;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  reaped_ = true;
  return ExitStatus::FromWaitStatus(status);
}

ExitStatus Process::Wait() {
  if (!running()) return ExitStatus{};
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  reaped_ = true;
  return r == pid_ ? ExitStatus::FromWaitStatus(status) : ExitStatus{};
}

ExitStatus Process::Kill() {
  SignalGroup(SIGKILL);
  return Wait();
}

}  // namespace ptxbench::process
