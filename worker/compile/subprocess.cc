#include "worker/compile/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ptxbench::worker {
namespace {

// Only async-signal-safe calls between fork and exec.
[[noreturn]] void ExecChild(int out_fd, const char* cwd, char* const* argv, char* const* envp,
                            const std::vector<std::pair<int, uint64_t>>& rlimits) {
  setpgid(0, 0);
  dup2(out_fd, STDOUT_FILENO);
  dup2(out_fd, STDERR_FILENO);
  close(out_fd);
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) {
    dup2(null_fd, STDIN_FILENO);
    close(null_fd);
  }
  close_range(3, ~0U, 0);  // nothing of the parent's beyond stdio
  for (const auto& [resource, value] : rlimits) {
    rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    setrlimit(resource, &limit);
  }
  if (cwd != nullptr && chdir(cwd) != 0) {
    static const char kMsg[] = "subprocess: chdir failed\n";
    (void)!write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1);
    _exit(127);
  }
  if (envp != nullptr) {
    execve(argv[0], argv, envp);
  } else {
    execv(argv[0], argv);
  }
  const char* reason = strerror(errno);  // not strictly signal-safe; glibc is fine
  static const char kMsg[] = "subprocess: exec failed: ";
  (void)!write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1);
  (void)!write(STDERR_FILENO, argv[0], strlen(argv[0]));
  (void)!write(STDERR_FILENO, ": ", 2);
  (void)!write(STDERR_FILENO, reason, strlen(reason));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(127);
}

}  // namespace

absl::StatusOr<SubprocessResult> RunSubprocess(const SubprocessOptions& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("RunSubprocess: empty argv");
  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (options.environment) {
    for (const std::string& e : *options.environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", strerror(errno)));
  }
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options.deadline;
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return absl::ResourceExhaustedError(absl::StrCat("fork: ", strerror(err)));
  }
  if (pid == 0) {
    ExecChild(fds[1], options.cwd.empty() ? nullptr : options.cwd.c_str(), argv.data(),
              options.environment ? envp.data() : nullptr, options.rlimits);
  }
  // Also from the parent, so the group exists before we might signal it.
  setpgid(pid, pid);
  close(fds[1]);
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);

  SubprocessResult result;
  result.pid = pid;
  bool pipe_open = true;
  int wstatus = 0;
  char buf[65536];
  auto drain = [&]() {
    while (true) {
      ssize_t n = read(fds[0], buf, sizeof(buf));
      if (n > 0) {
        size_t room =
            options.max_output_bytes - std::min(options.max_output_bytes, result.output.size());
        if (static_cast<size_t>(n) > room) result.truncated = true;
        result.output.append(buf, std::min(room, static_cast<size_t>(n)));
        continue;
      }
      if (n == 0) pipe_open = false;
      if (n < 0 && errno == EINTR) continue;
      return;  // EOF or EAGAIN
    }
  };

  while (true) {
    if (!result.timed_out && absl::Now() >= deadline) {
      kill(-pid, SIGKILL);
      result.timed_out = true;
    }
    // WNOWAIT leaves the child a zombie, so its pid (= the group id) cannot
    // be reused before the group is killed below.
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      break;
    }
    // Sleep on the pipe, at most until the deadline and never long, since
    // the child may exit without closing a pipe a grandchild still holds.
    int64_t wait_ms =
        result.timed_out
            ? 10
            : std::clamp<int64_t>(absl::ToInt64Milliseconds(deadline - absl::Now()), 1, 50);
    if (pipe_open) {
      pollfd p{fds[0], POLLIN, 0};
      poll(&p, 1, static_cast<int>(wait_ms));
      drain();
    } else {
      usleep(static_cast<useconds_t>(wait_ms * 1000));
    }
  }
  // Whatever is left in the group (stragglers that outlived the child) goes.
  kill(-pid, SIGKILL);
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  while (pipe_open) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) break;  // a stray holder that escaped the group
    drain();
  }
  close(fds[0]);

  result.elapsed = absl::Now() - start;
  if (WIFEXITED(wstatus)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    result.term_signal = WTERMSIG(wstatus);
  }
  if (result.truncated) {
    absl::StrAppend(&result.output, "\n[output truncated at ", options.max_output_bytes,
                    " bytes]\n");
  }
  if (result.timed_out) {
    absl::StrAppend(&result.output, "\n[killed: deadline of ",
                    absl::FormatDuration(options.deadline), " exceeded]\n");
  }
  return result;
}

}  // namespace ptxbench::worker
