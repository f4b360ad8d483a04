#ifndef PTXBENCH_DASHBOARD_SERVER_H_
#define PTXBENCH_DASHBOARD_SERVER_H_

// The scheduler's live dashboard (docs/DASHBOARD.md): a small HTTP(S)
// server whose pages show experiments, trajectories turn by turn and the
// executors, updated as they change. It holds no data and no authority of
// its own: everything it shows or does is a call to the scheduler's
// ClientService made with the signed-in user's token (routes.h).
//
// Thread-safe; Start serves on threads of its own until Stop.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "grpcpp/channel.h"

namespace ptxbench::dashboard {

struct DashboardOptions {
  // "HOST:PORT", "[::1]:PORT"; port 0 picks a free one.
  std::string listen = "127.0.0.1:0";
  // PEM files of the certificate (chain) and its key: both set, the
  // dashboard serves HTTPS with them (the scheduler passes its gRPC port's
  // --tls-cert/--tls-key); both empty, plain HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Reaches the scheduler's ClientService (its in-process channel). Required.
  std::shared_ptr<grpc::Channel> scheduler;
  // How long a sign-in lasts, used or not.
  absl::Duration session_ttl = absl::Hours(12);
  // Each call to the scheduler gives up after this long.
  absl::Duration call_deadline = absl::Seconds(60);
  // Not owned; sessions expire by it.
  Clock* clock = Clock::Real();
};

class DashboardServer {
 public:
  // Binds the address and serves. INVALID_ARGUMENT for an address that is
  // not HOST:PORT, half a TLS pair or no channel; FAILED_PRECONDITION when
  // the certificate or key cannot be loaded; UNAVAILABLE when the address
  // cannot be bound. Each names the value.
  static absl::StatusOr<std::unique_ptr<DashboardServer>> Start(DashboardOptions options);

  ~DashboardServer();  // Stop()
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  // "https://127.0.0.1:8443/": the bound address, with its scheme.
  const std::string& url() const;
  // "127.0.0.1:8443": the bound host and port.
  const std::string& address() const;
  // Stops taking connections and waits for the server's thread. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit DashboardServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ptxbench::dashboard

#endif  // PTXBENCH_DASHBOARD_SERVER_H_
