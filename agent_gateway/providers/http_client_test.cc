// The HTTP client against a real server on loopback: many calls in flight
// from its one thread, cancellation, transport errors.
#include "agent_gateway/providers/http_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "agent_gateway/testing/fake_model_server.h"

namespace ptxbench::agent_gateway {
namespace {

constexpr int kCalls = 48;

using testing_support::FakeModelServer;
using testing_support::Gate;

FakeModelServer::Options Pool() {
  FakeModelServer::Options options;
  options.threads = kCalls + 8;
  return options;
}

// The fake model server: POST /echo answers with its body once `gather_`
// opens; POST /never holds its answer until the test ends.
class HttpClientTest : public ::testing::Test {
 protected:
  HttpClientTest() {
    server_.Answer([this](const httplib::Request& req, httplib::Response& res) {
      if (req.path == "/never") {
        release_.Wait(std::chrono::seconds(10));
        res.status = 500;
        return;
      }
      gather_.Wait(std::chrono::seconds(20));
      res.set_content(req.body, "text/plain");
    });
  }
  void TearDown() override {
    gather_.Open();
    release_.Open();
  }
  std::string url(const std::string& path) const { return server_.root() + path; }

  Gate gather_, release_;
  FakeModelServer server_{Pool()};
};

TEST_F(HttpClientTest, ManyCallsInFlightFromOneThread) {
  HttpClient client;
  // The client's thread runs the callbacks; the test reads what they wrote.
  struct Answers {
    absl::Mutex mu;
    std::vector<std::string> bodies ABSL_GUARDED_BY(mu);
  } answers;
  std::promise<void> all_done;
  for (int i = 0; i < kCalls; ++i) {
    HttpRequest r;
    r.url = url("/echo");
    r.body = "call-" + std::to_string(i);
    client.Send(std::move(r), nullptr, [&](HttpResult result) {
      absl::MutexLock lock(&answers.mu);
      answers.bodies.push_back(result.ok() ? result->body
                                           : std::string(result.status().message()));
      if (static_cast<int>(answers.bodies.size()) == kCalls) all_done.set_value();
    });
  }
  // Answers come only once the server holds every call at once.
  EXPECT_TRUE(server_.WaitForInFlight(kCalls, std::chrono::seconds(20)));
  gather_.Open();
  ASSERT_EQ(all_done.get_future().wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(server_.PeakInFlight(), kCalls) << "the server must have held every call at once";
  std::vector<std::string> bodies;
  {
    absl::MutexLock lock(&answers.mu);
    bodies = answers.bodies;
  }
  std::sort(bodies.begin(), bodies.end());
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_TRUE(std::binary_search(bodies.begin(), bodies.end(), "call-" + std::to_string(i)));
  }
  EXPECT_EQ(client.in_flight(), 0);
}

TEST_F(HttpClientTest, CancelledCallEndsSoonWithCancelled) {
  HttpClient client;
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  std::promise<HttpResult> result;
  HttpRequest r;
  r.url = url("/never");
  client.Send(std::move(r), cancelled, [&](HttpResult out) { result.set_value(std::move(out)); });
  absl::SleepFor(absl::Milliseconds(100));
  const absl::Time start = absl::Now();
  *cancelled = true;
  std::future<HttpResult> future = result.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_EQ(future.get().status().code(), absl::StatusCode::kCancelled);
}

TEST_F(HttpClientTest, TimeoutAndRefusedConnectionAreTransportErrors) {
  HttpClient client;
  HttpRequest slow;
  slow.url = url("/never");
  slow.timeout = absl::Milliseconds(200);
  EXPECT_EQ(client.Fetch(slow).status().code(), absl::StatusCode::kDeadlineExceeded);
  HttpRequest nowhere;
  nowhere.url = "http://127.0.0.1:1/v1/chat/completions";
  nowhere.post = false;
  EXPECT_EQ(client.Fetch(nowhere).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(HttpClientTest, ClosingEndsCallsInFlight) {
  std::promise<HttpResult> result;
  {
    HttpClient client;
    HttpRequest r;
    r.url = url("/never");
    client.Send(std::move(r), nullptr, [&](HttpResult out) { result.set_value(std::move(out)); });
    absl::SleepFor(absl::Milliseconds(50));
  }
  std::future<HttpResult> future = result.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(future.get().status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace ptxbench::agent_gateway
