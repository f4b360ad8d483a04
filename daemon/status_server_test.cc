#include "daemon/status_server.h"

#include <httplib.h>

#include <atomic>

#include "gtest/gtest.h"

namespace ptxbench::daemon {
namespace {

TEST(daemon_status_server, HealthAndMetricsPages) {
  std::atomic<bool> healthy{false};
  auto server = StatusServer::Start(
      "127.0.0.1:0", {[&healthy]() -> absl::Status {
                        return healthy ? absl::OkStatus()
                                       : absl::UnavailableError("not registered with the scheduler");
                      },
                      [] { return std::string("ptxbench_x_total{model=\"m\"} 3\n"); }});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->address();
  httplib::Client client("127.0.0.1", std::stoi(address.substr(address.rfind(':') + 1)));
  auto unhealthy = client.Get("/healthz");
  ASSERT_TRUE(unhealthy);
  EXPECT_EQ(unhealthy->status, 503);
  EXPECT_EQ(unhealthy->body, "not registered with the scheduler\n");
  healthy = true;
  auto ok = client.Get("/healthz");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body, "ptxbench_x_total{model=\"m\"} 3\n");
}

TEST(daemon_status_server, BadAddressIsRefused) {
  EXPECT_EQ(StatusServer::Start("localhost", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ptxbench::daemon
