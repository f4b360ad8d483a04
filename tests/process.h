#ifndef PTXBENCH_TESTS_PROCESS_H_
#define PTXBENCH_TESTS_PROCESS_H_

// Child processes for cross-process tests and benchmarks: spawn a binary with
// its output in a log file, signal it, wait for it; run a command to
// completion and capture its stdout.

#include <sys/types.h>

#include <string>
#include <vector>

namespace ptxbench::testing {

class Child {
 public:
  Child() = default;
  Child(Child&& other) noexcept : pid_(other.pid_) { other.pid_ = -1; }
  Child& operator=(Child&& other) noexcept;
  ~Child();  // SIGKILLs and reaps a child still running

  // Starts argv[0] with argv; stdout and stderr go to `log_path`.
  static Child Spawn(const std::vector<std::string>& argv, const std::string& log_path);

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  void Signal(int signal) const;
  // SIGKILL (like `kill -9`) and reap.
  void KillNow();
  // Waits for exit; returns the exit code, or 128+signal.
  int Wait();

 private:
  pid_t pid_ = -1;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
};

// Runs argv to completion, capturing stdout (stderr is appended to out too
// when `merge_stderr`).
CommandResult RunCommand(const std::vector<std::string>& argv, bool merge_stderr = false);

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreePort();

// Last `n` lines of a file, for failure messages.
std::string Tail(const std::string& path, int n = 30);

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTS_PROCESS_H_
