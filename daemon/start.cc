#include "daemon/start.h"

#include <sys/prctl.h>

#include "absl/synchronization/mutex.h"
#include "daemon/stop_signals.h"

namespace ptxbench::daemon {

void StartDaemonProcess() {
  prctl(PR_SET_DUMPABLE, 0);
  BlockStopSignals();
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace ptxbench::daemon
