#include "cli/supervisor.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace ptxbench::cli {
namespace {

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Signals the child's process group (its own subprocesses too), or the child
// alone if it has no group of its own.
void SignalChild(pid_t pid, int sig) {
  if (kill(-pid, sig) != 0) kill(pid, sig);
}

}  // namespace

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return absl::StrCat("exited with code ", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return absl::StrCat("was killed by signal ", sig, " (", strsignal(sig), ")");
  }
  return absl::StrCat("ended with wait status ", wait_status);
}

Supervisor::~Supervisor() { StopAll(absl::Seconds(10)); }

absl::StatusOr<pid_t> Supervisor::Start(const ChildSpec& spec) {
  // Everything the child needs is prepared here: after fork() it may only make
  // async-signal-safe calls (gRPC threads may exist in this process).
  const int log_fd = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open log file ", spec.log_path, ": ", std::strerror(errno)));
  }
  std::vector<std::string> argv_strings = {spec.binary};
  argv_strings.insert(argv_strings.end(), spec.args.begin(), spec.args.end());
  WriteAll(log_fd,
           absl::StrCat("==== ptxbench up: ",
                        absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::Now(), absl::LocalTimeZone()),
                        " starting ", absl::StrJoin(argv_strings, " "), "\n"));
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int exec_pipe[2];  // the child writes errno here when exec fails
  if (null_fd < 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    close(log_fd);
    if (null_fd >= 0) close(null_fd);
    return absl::InternalError(absl::StrCat("cannot start ", spec.name, ": ", std::strerror(err)));
  }
  const int max_fd = static_cast<int>(sysconf(_SC_OPEN_MAX));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the parent died before prctl
    dup2(null_fd, STDIN_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    // gRPC's sockets are not close-on-exec; a child holding one keeps it
    // registered in this process's epoll set and stalls later connections.
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < max_fd; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    execv(argv[0], argv.data());
    const int err = errno;
    ssize_t ignored = write(exec_pipe[1], &err, sizeof(err));
    (void)ignored;
    _exit(127);
  }
  const int fork_errno = errno;
  close(exec_pipe[1]);
  close(log_fd);
  close(null_fd);
  if (pid < 0) {
    close(exec_pipe[0]);
    return absl::InternalError(
        absl::StrCat("cannot start ", spec.name, ": fork failed: ", std::strerror(fork_errno)));
  }
  setpgid(pid, pid);  // also here, so that no signal can race the child's own call

  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(exec_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close(exec_pipe[0]);
  if (n == sizeof(exec_errno)) {
    waitpid(pid, nullptr, 0);
    return absl::FailedPreconditionError(absl::StrCat("cannot start ", spec.name, " (", spec.binary,
                                                      "): ", std::strerror(exec_errno)));
  }
  children_.push_back(Child{spec, pid, true});
  return pid;
}

std::vector<Supervisor::Ended> Supervisor::Reap() {
  std::vector<Ended> ended;
  for (Child& child : children_) {
    if (!child.running) continue;
    int status = 0;
    if (waitpid(child.pid, &status, WNOHANG) == child.pid) {
      child.running = false;
      ended.push_back({child.spec.name, child.spec.log_path, DescribeWaitStatus(status)});
    }
  }
  return ended;
}

bool Supervisor::Running(const std::string& name) const {
  for (const Child& child : children_) {
    if (child.spec.name == name && child.running) return true;
  }
  return false;
}

int Supervisor::running_count() const {
  int n = 0;
  for (const Child& child : children_) n += child.running ? 1 : 0;
  return n;
}

void Supervisor::WaitFor(const std::vector<Child*>& which, absl::Time deadline) {
  while (true) {
    bool any = false;
    for (Child* child : which) {
      if (!child->running) continue;
      if (waitpid(child->pid, nullptr, WNOHANG) == child->pid) {
        child->running = false;
      } else {
        any = true;
      }
    }
    if (!any || absl::Now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<std::string> Supervisor::StopAll(absl::Duration grace) {
  const absl::Time deadline = absl::Now() + grace;
  for (bool last_tier : {false, true}) {
    std::vector<Child*> tier;
    for (Child& child : children_) {
      if (!child.running || child.spec.stop_last != last_tier) continue;
      SignalChild(child.pid, SIGTERM);
      tier.push_back(&child);
    }
    WaitFor(tier, deadline);
  }
  std::vector<std::string> killed;
  for (Child& child : children_) {
    if (!child.running) continue;
    SignalChild(child.pid, SIGKILL);
    waitpid(child.pid, nullptr, 0);
    child.running = false;
    killed.push_back(child.spec.name);
  }
  return killed;
}

}  // namespace ptxbench::cli
