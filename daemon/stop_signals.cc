#include "daemon/stop_signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <utility>

#include "common/log.h"
#include "process/process.h"

namespace ptxbench::daemon {
namespace {

std::atomic<int> g_stop_signals{0};

}  // namespace

int StopSignalsReceived() { return g_stop_signals.load(); }

void BlockStopSignals() {
  sigset_t set = process::StopSignalSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

StopSignalWatcher::StopSignalWatcher(std::function<void(int)> on_signal)
    : thread_([this, on_signal = std::move(on_signal)] {
        sigset_t set = process::StopSignalSet();
        // A short timeout so the destructor can end the watch.
        const timespec timeout = {0, 100 * 1000 * 1000};
        int received = 0;
        while (!done_) {
          int sig = sigtimedwait(&set, nullptr, &timeout);
          if (sig <= 0) continue;
          g_stop_signals.fetch_add(1);
          if (++received > 2) {
            LogWarning("third signal; exiting at once", {{"signal", strsignal(sig)}});
            _exit(128 + sig);
          }
          LogInfo("signal received", {{"signal", strsignal(sig)}, {"count", std::to_string(received)}});
          on_signal(received);
        }
      }) {}

StopSignalWatcher::~StopSignalWatcher() {
  done_ = true;
  thread_.join();
}

}  // namespace ptxbench::daemon
