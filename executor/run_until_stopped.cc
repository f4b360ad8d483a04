#include "executor/run_until_stopped.h"

#include <cstdio>
#include <optional>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "daemon/stop_signals.h"
#include "executor/command_line.h"

// For both executor daemons, which end with RunUntilStopped.
ABSL_FLAG(int, stop_grace_s, 600,
          "After a stop signal (SIGTERM, SIGINT, SIGHUP, SIGQUIT), seconds the held tasks have to finish and be reported before "
          "they are handed back to the scheduler (--stop-grace-s; a second signal hands them "
          "back at once)");

namespace ptxbench::executor {

int RunUntilStopped(ExecutorRunner& runner, const std::string& daemon) {
  if (absl::GetFlag(FLAGS_stop_grace_s) < 0) {
    std::fprintf(stderr, "ptxbench-%s: --stop-grace-s must not be negative\n", daemon.c_str());
    return kUsageExitCode;
  }
  const absl::Duration grace = absl::Seconds(absl::GetFlag(FLAGS_stop_grace_s));
  absl::Mutex mu;
  absl::CondVar changed;
  std::optional<absl::Time> hand_back_at;  // set by the first signal
  bool done = false;
  // Hands the held tasks back when the grace period is over.
  std::thread grace_timer([&] {
    absl::MutexLock lock(&mu);
    while (!done) {
      if (hand_back_at && absl::Now() >= *hand_back_at) {
        LogWarning("grace period over; handing the held tasks back",
                   {{"stop_grace_s", absl::StrCat(absl::ToInt64Seconds(grace))}});
        runner.Stop();
        hand_back_at = absl::InfiniteFuture();
      }
      changed.WaitWithDeadline(&mu, hand_back_at.value_or(absl::InfiniteFuture()));
    }
  });
  absl::Status status;
  {
    daemon::StopSignalWatcher watcher([&](int count) {
      if (count > 1) {
        LogWarning("second signal; handing the held tasks back", {});
        runner.Stop();
        return;
      }
      LogInfo("stopping: no new leases; the held tasks finish within the grace period",
              {{"stop_grace_s", absl::StrCat(absl::ToInt64Seconds(grace))}});
      runner.Drain();
      absl::MutexLock lock(&mu);
      hand_back_at = absl::Now() + grace;
      changed.Signal();
    });
    status = runner.Run();
  }
  {
    absl::MutexLock lock(&mu);
    done = true;
    changed.Signal();
  }
  grace_timer.join();
  if (!status.ok()) {
    LogError(absl::StrCat(daemon, " failed"), {{"error", status.ToString()}});
    return 1;
  }
  return 0;
}

}  // namespace ptxbench::executor
