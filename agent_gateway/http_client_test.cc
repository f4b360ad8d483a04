// The HTTP client against a real server on loopback: many calls in flight
// from its one thread, cancellation, transport errors.
#include "agent_gateway/http_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace ptxbench::agent_gateway {
namespace {

constexpr int kCalls = 48;

// Holds every POST until `kCalls` are in at once (or 5 s pass), then
// answers each with its own body.
class GatheringServer {
 public:
  GatheringServer() {
    server_.new_task_queue = [] { return new httplib::ThreadPool(kCalls + 8); };
    server_.Post("/echo", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock<std::mutex> lock(mu_);
      peak_ = std::max(peak_, ++inside_);
      cv_.notify_all();
      cv_.wait_for(lock, std::chrono::seconds(5), [this] { return peak_ >= kCalls; });
      --inside_;
      res.set_content(req.body, "text/plain");
    });
    server_.Post("/never", [this](const httplib::Request&, httplib::Response& res) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(10), [this] { return closing_; });
      res.status = 500;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~GatheringServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int peak() {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  int inside_ = 0, peak_ = 0;
  bool closing_ = false;
};

TEST(HttpClientTest, ManyCallsInFlightFromOneThread) {
  GatheringServer server;
  HttpClient client;
  std::mutex mu;
  std::vector<std::string> bodies;
  std::promise<void> all_done;
  for (int i = 0; i < kCalls; ++i) {
    HttpRequest r;
    r.url = server.url("/echo");
    r.body = "call-" + std::to_string(i);
    client.Send(std::move(r), nullptr, [&](HttpResult result) {
      std::lock_guard<std::mutex> lock(mu);
      bodies.push_back(result.ok() ? result->body : std::string(result.status().message()));
      if (static_cast<int>(bodies.size()) == kCalls) all_done.set_value();
    });
  }
  ASSERT_EQ(all_done.get_future().wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(server.peak(), kCalls) << "the server must have held every call at once";
  std::sort(bodies.begin(), bodies.end());
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_TRUE(std::binary_search(bodies.begin(), bodies.end(), "call-" + std::to_string(i)));
  }
  EXPECT_EQ(client.in_flight(), 0);
}

TEST(HttpClientTest, CancelledCallEndsSoonWithCancelled) {
  GatheringServer server;
  HttpClient client;
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  std::promise<HttpResult> result;
  HttpRequest r;
  r.url = server.url("/never");
  client.Send(std::move(r), cancelled, [&](HttpResult out) { result.set_value(std::move(out)); });
  absl::SleepFor(absl::Milliseconds(100));
  const absl::Time start = absl::Now();
  *cancelled = true;
  std::future<HttpResult> future = result.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_EQ(future.get().status().code(), absl::StatusCode::kCancelled);
}

TEST(HttpClientTest, TimeoutAndRefusedConnectionAreTransportErrors) {
  GatheringServer server;
  HttpClient client;
  HttpRequest slow;
  slow.url = server.url("/never");
  slow.timeout = absl::Milliseconds(200);
  EXPECT_EQ(client.Fetch(slow).status().code(), absl::StatusCode::kDeadlineExceeded);
  HttpRequest nowhere;
  nowhere.url = "http://127.0.0.1:1/v1/chat/completions";
  nowhere.post = false;
  EXPECT_EQ(client.Fetch(nowhere).status().code(), absl::StatusCode::kUnavailable);
}

TEST(HttpClientTest, ClosingEndsCallsInFlight) {
  GatheringServer server;
  std::promise<HttpResult> result;
  {
    HttpClient client;
    HttpRequest r;
    r.url = server.url("/never");
    client.Send(std::move(r), nullptr, [&](HttpResult out) { result.set_value(std::move(out)); });
    absl::SleepFor(absl::Milliseconds(50));
  }
  std::future<HttpResult> future = result.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(future.get().status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace ptxbench::agent_gateway
