#ifndef PTXBENCH_DAEMON_STATUS_SERVER_H_
#define PTXBENCH_DAEMON_STATUS_SERVER_H_

// A daemon's health and metrics over plain HTTP, for load balancers,
// orchestrators and Prometheus: GET /healthz answers 200 "ok" or 503 with
// the reason, GET /metrics the Prometheus text the daemon renders.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace ptxbench::daemon {

class StatusServer {
 public:
  struct Pages {
    // OK when healthy; otherwise the reason (answered as 503).
    std::function<absl::Status()> health;
    std::function<std::string()> metrics;
  };
  // Listens on HOST:PORT, or on 127.0.0.1 for a bare PORT or :PORT (port 0
  // picks one), and serves on its own thread
  // until destroyed. kInvalidArgument for a malformed address, kUnavailable
  // when it cannot listen.
  static absl::StatusOr<std::unique_ptr<StatusServer>> Start(const std::string& address,
                                                             Pages pages);
  ~StatusServer();
  // HOST:PORT actually bound.
  const std::string& address() const { return address_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string address_;
};

// Calls `log` every `interval` on a thread of its own until destroyed (a
// daemon's periodic "stats" line). A non-positive interval: never.
class PeriodicLog {
 public:
  PeriodicLog(absl::Duration interval, std::function<void()> log);
  ~PeriodicLog();

 private:
  absl::Notification done_;
  std::thread thread_;
};

}  // namespace ptxbench::daemon

#endif  // PTXBENCH_DAEMON_STATUS_SERVER_H_
