#include "cli/terminal/progress.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace ptxbench::cli {

void WithElapsedProgress(std::ostream& err, bool live, const std::string& label,
                         const std::function<void()>& work, absl::Duration tick) {
  if (!live) {
    err << label << std::endl;
    work();
    return;
  }
  absl::Notification done;
  std::thread worker([&] {
    work();
    done.Notify();
  });
  const absl::Time start = absl::Now();
  size_t width = 0;
  do {
    const std::string line =
        label + " " + std::to_string(absl::ToInt64Seconds(absl::Now() - start)) + " s";
    width = std::max(width, line.size());
    err << "\r" << line << std::flush;
  } while (!done.WaitForNotificationWithTimeout(tick));
  worker.join();
  err << "\r" << std::string(width, ' ') << "\r" << std::flush;
}

}  // namespace ptxbench::cli
