#ifndef PTXBENCH_DAEMON_STOP_SIGNALS_H_
#define PTXBENCH_DAEMON_STOP_SIGNALS_H_

// How ptxbench's daemons (scheduler, worker, gateway) take the stop signals
// (process::StopSignalSet: SIGINT, SIGTERM, SIGHUP, SIGQUIT): blocked in
// every thread and taken synchronously, by one watcher thread or by the
// main thread's own wait, so stopping runs ordinary code (locks, logging)
// instead of an async-signal handler.

#include <atomic>
#include <functional>
#include <thread>

namespace ptxbench::daemon {

// Blocks the stop signals in the calling thread and every thread it starts
// afterwards. Call first in main(), before any thread (gRPC's too) exists.
void BlockStopSignals();

// How many stop signals a StopSignalWatcher of this process has taken. From
// any thread.
int StopSignalsReceived();

// Watches for the stop signals (blocked with BlockStopSignals) and calls
// `on_signal(n)` from its own thread for the n-th one (1: stop gently, 2:
// stop now); a third ends the process at once (exit status 128 + signal),
// for a stop that hangs.
class StopSignalWatcher {
 public:
  explicit StopSignalWatcher(std::function<void(int)> on_signal);
  ~StopSignalWatcher();  // stops watching and joins
  StopSignalWatcher(const StopSignalWatcher&) = delete;
  StopSignalWatcher& operator=(const StopSignalWatcher&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace ptxbench::daemon

#endif  // PTXBENCH_DAEMON_STOP_SIGNALS_H_
