#include "daemon/http_thread.h"

#include <httplib.h>

#include "gtest/gtest.h"

namespace ptxbench::daemon {
namespace {

TEST(daemon_http_thread, ServesUntilStopped) {
  httplib::Server server;
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("up", "text/plain");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  HttpThread thread(server);
  EXPECT_TRUE(server.is_running());
  httplib::Client client("127.0.0.1", port);
  auto answer = client.Get("/");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->body, "up");
  thread.Stop();
  thread.Stop();  // idempotent
  EXPECT_FALSE(server.is_running());
  EXPECT_FALSE(httplib::Client("127.0.0.1", port).Get("/"));
}

// Stopped the moment it starts, many times: every stop ends (a stop before
// the server runs would be lost, and the join would wait for ever).
TEST(daemon_http_thread, AStopRightAfterTheStartEnds) {
  for (int i = 0; i < 200; ++i) {
    httplib::Server server;
    ASSERT_GT(server.bind_to_any_port("127.0.0.1"), 0);
    HttpThread thread(server);
  }
}

// A server that was never bound ends at once; the constructor still
// returns.
TEST(daemon_http_thread, AServerThatCannotListenDoesNotHang) {
  httplib::Server server;
  HttpThread thread(server);
  thread.Stop();
}

}  // namespace
}  // namespace ptxbench::daemon
