#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_WATCHED_HOST_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_WATCHED_HOST_H_

// The candidate host as the harness watches it: a thread polls its sandbox
// every few milliseconds (which enforces the watchdog's limits and notices
// its end) and reads its stdout/stderr into a bounded buffer. What the host
// printed is the kernel's own output: it is shown, labelled, never parsed.

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sandbox/sandboxed_process.h"

namespace ptxbench::runner {

class WatchedHost {
 public:
  // Takes the process and the read end of its output pipe.
  WatchedHost(std::unique_ptr<sandbox::SandboxedProcess> process, int output_fd);
  ~WatchedHost();  // kills what is left and stops watching
  WatchedHost(const WatchedHost&) = delete;
  WatchedHost& operator=(const WatchedHost&) = delete;

  absl::Status Release();
  void Kill(sandbox::SandboxedProcess::KillReason why);
  bool ended() const;
  // Waits up to `timeout` for the end; whether it ended.
  bool WaitForEnd(absl::Duration timeout);
  // How it ended, in words ("exited with code 3", "was killed by signal 11
  // (Segmentation fault)", "exceeded its memory limit (8 GiB)", ...), and the
  // tail of what it printed.
  std::string Describe() const;
  // What it printed so far (bounded: its first and last few kilobytes).
  std::string Output() const;

 private:
  void Loop();
  std::string OutputLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::unique_ptr<sandbox::SandboxedProcess> process_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  sandbox::Outcome outcome_ ABSL_GUARDED_BY(mu_);
  std::string head_ ABSL_GUARDED_BY(mu_), tail_ ABSL_GUARDED_BY(mu_);
  size_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  const int output_fd_;
  std::thread thread_;
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_WATCHED_HOST_H_
