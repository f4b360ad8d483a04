#ifndef PTXBENCH_EXECUTOR_DAEMON_FLAGS_H_
#define PTXBENCH_EXECUTOR_DAEMON_FLAGS_H_

// The flags both executor daemons (ptxbench-worker, ptxbench-gateway) take,
// defined once here rather than in each main.cc, as the connection's are
// (connection_flags.h) and --stop-grace-s (run_until_stopped.h):
//   --scheduler HOST:PORT         where the scheduler listens
//   --name NAME                   the name the scheduler shows
//   --slots N                     tasks at once (0: the daemon's default)
//   --status-listen [HOST:]PORT   /healthz and /metrics (daemon/status_server.h)
//   --stats-interval-s S          the periodic stats line
//   --simulate, --seed, --latency-ms, --failure-rate, --crash-rate
//                                 simulated work and injected faults
// What differs between the daemons (the name and the simulated latency by
// default, what a slot is) is given by each main, not by a second flag.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "executor/fault_injection.h"

namespace ptxbench::executor {

// The defaults that differ between the daemons.
struct DaemonDefaults {
  std::string name;        // when --name is empty
  absl::Duration latency;  // when --latency-ms is not given
};

struct DaemonFlags {
  std::string scheduler;  // --scheduler, else DefaultSchedulerAddress()
  std::string name;       // --name, else DaemonDefaults::name
  // --slots as given: 0 asks for the daemon's default (which depends on its
  // mode), and each mode says which values it takes.
  int slots = 0;
  std::string status_listen;  // empty: no status server
  absl::Duration stats_interval;  // zero: no stats line
  bool simulate = false;
  uint64_t seed = 0;
  absl::Duration latency;  // --latency-ms, else DaemonDefaults::latency
  FaultRates faults;       // `crash` left unset: _exit(70)
};

// The flags as parsed (executor/command_line.h), with `defaults` where they
// were not given. Checks nothing: SimulationProblem checks what simulation
// reads, which a real daemon ignores.
DaemonFlags ReadDaemonFlags(const DaemonDefaults& defaults);

// INVALID_ARGUMENT naming the flag: a negative --latency-ms, a --failure-rate
// or --crash-rate outside [0, 1].
absl::Status SimulationProblem(const DaemonFlags& flags);

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_DAEMON_FLAGS_H_
