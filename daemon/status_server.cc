#include "daemon/status_server.h"

#include <httplib.h>

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "auth/server.h"
#include "daemon/http_thread.h"

namespace ptxbench::daemon {

struct StatusServer::Impl {
  httplib::Server server;
  std::optional<HttpThread> thread;  // after the server: stopped first
};

absl::StatusOr<std::unique_ptr<StatusServer>> StatusServer::Start(const std::string& asked,
                                                                  Pages pages) {
  // A bare port binds loopback: metrics name models and counts, and nothing
  // there is for the network unless the user names a host.
  const std::string address = auth::LoopbackByDefault(asked);
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("status address '", address, "' is not HOST:PORT"));
  }
  const std::string host = address.substr(0, colon);
  auto out = std::unique_ptr<StatusServer>(new StatusServer());
  out->impl_ = std::make_unique<Impl>();
  httplib::Server& server = out->impl_->server;
  // Two pages, tiny answers: a few threads are plenty.
  server.new_task_queue = [] { return new httplib::ThreadPool(2); };
  server.Get("/healthz", [health = pages.health](const httplib::Request&, httplib::Response& res) {
    absl::Status s = health();
    res.status = s.ok() ? 200 : 503;
    res.set_content(s.ok() ? "ok\n" : absl::StrCat(s.message(), "\n"), "text/plain");
  });
  server.Get("/metrics", [metrics = pages.metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics(), "text/plain; version=0.0.4");
  });
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot serve status on ", address,
                                               " (address in use or invalid)"));
  }
  out->address_ = absl::StrCat(host, ":", bound);
  out->impl_->thread.emplace(server);
  return out;
}

PeriodicLog::PeriodicLog(absl::Duration interval, std::function<void()> log) {
  if (interval <= absl::ZeroDuration()) return;
  thread_ = std::thread([this, interval, log = std::move(log)] {
    while (!done_.WaitForNotificationWithTimeout(interval)) log();
  });
}

PeriodicLog::~PeriodicLog() {
  done_.Notify();
  if (thread_.joinable()) thread_.join();
}

StatusServer::~StatusServer() = default;

}  // namespace ptxbench::daemon
