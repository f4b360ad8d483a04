#ifndef PTXBENCH_CLI_UP_SUPERVISOR_H_
#define PTXBENCH_CLI_UP_SUPERVISOR_H_

// The child processes of `ptxbench up` (started by process::Process). Each
// child runs in its own process group (so Ctrl-C in the terminal reaches only
// ptxbench, which then stops the children in order), gets SIGTERM if
// ptxbench itself dies, reads /dev/null and appends stdout and stderr to its
// log file. Not thread-safe: one thread owns a Supervisor.

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "process/process.h"

namespace ptxbench::cli {

class Supervisor {
 public:
  struct ChildSpec {
    std::string name;  // "scheduler", "worker-1"
    std::string binary;
    std::vector<std::string> args;
    std::string log_path;
    // Stopped after every other child (the scheduler: executors hand their
    // leases back to it while they stop).
    bool stop_last = false;
  };

  // A child that ended: "worker-1 exited with code 2".
  struct Ended {
    std::string name;
    std::string log_path;
    std::string how;  // "exited with code 2", "was killed by signal 9 (Killed)"
  };

  Supervisor() = default;
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;
  // Stops whatever still runs.
  ~Supervisor();

  // Starts a child. Fails, naming the binary, when it cannot be executed.
  absl::StatusOr<pid_t> Start(const ChildSpec& spec);

  // Children that ended since the last call, in start order.
  std::vector<Ended> Reap();

  bool Running(const std::string& name) const;
  int running_count() const;

  // SIGTERM to every child (stop_last ones once the others are gone), then
  // SIGKILL to whatever still runs after `grace`. Returns the names of the
  // children that had to be killed.
  std::vector<std::string> StopAll(absl::Duration grace);

 private:
  struct Child {
    ChildSpec spec;
    process::Process process;
  };

  // Waits until none of `which` runs or `deadline`; reaps them.
  void WaitFor(const std::vector<Child*>& which, absl::Time deadline);

  std::vector<Child> children_;
};

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_UP_SUPERVISOR_H_
