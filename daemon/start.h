#ifndef PTXBENCH_DAEMON_START_H_
#define PTXBENCH_DAEMON_START_H_

// What every daemon's main() (scheduler, worker, gateway) does first, before
// any thread, gRPC's included, exists:
// - no process of the same uid may read this one's memory or environment (API
//   keys, tokens): ptrace and /proc/<pid>/{mem,environ} are refused;
// - the stop signals are blocked in every thread (stop_signals.h);
// - Abseil's mutex deadlock detection is off. Debian builds Abseil without
//   NDEBUG, so it is on by default: every lock of an absl::Mutex goes through
//   a process-wide graph of lock orders behind one global lock, which every
//   gRPC and scheduler thread then contends for (2% of the scheduler's CPU in
//   bench/scheduler_bench). The tests keep it on.
namespace ptxbench::daemon {

void StartDaemonProcess();

}  // namespace ptxbench::daemon

#endif  // PTXBENCH_DAEMON_START_H_
