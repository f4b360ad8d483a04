// The model proxy (model_proxy.h) in front of a scripted model: what it
// forwards, what it refuses, what it counts.
#include "agent_gateway/agent/model_proxy.h"

#include <gmock/gmock.h>
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "testing/scripted_model.h"

namespace ptxbench::agent_gateway {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

class ModelProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = absl::StrCat(::testing::TempDir(), "/proxy-", getpid(), ".sock");
  }
  void TearDown() override { std::filesystem::remove(socket_); }

  // A proxy for Anthropic Messages in front of `model`.
  std::unique_ptr<ModelProxy> Start(const testing::ScriptedModel& model,
                                    ModelProxy::Budget budget) {
    ModelProxy::Upstream up;
    up.wire = agents::Wire::kAnthropicMessages;
    up.base_url = absl::StrCat("http://127.0.0.1:", model.port());
    up.key_headers = {"x-api-key: sk-real"};
    up.model_id = "claude-pinned";
    up.price.input_per_mtok = 3.0;
    up.price.output_per_mtok = 15.0;
    auto proxy = std::make_unique<ModelProxy>(up, budget);
    EXPECT_TRUE(proxy->Listen(socket_));
    return proxy;
  }

  // Sends `raw` on a new connection; the whole answer.
  std::string Send(const std::string& raw) {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socket_.data(), socket_.size());
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(write(fd, raw.data(), raw.size()), static_cast<ssize_t>(raw.size()));
    shutdown(fd, SHUT_WR);
    // A proxy that never answers fails the test in a minute, saying so,
    // rather than at ctest's timeout.
    const timeval patience{60, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof(buffer))) > 0) out.append(buffer, n);
    EXPECT_EQ(n, 0) << "the proxy's answer did not end within a minute: " << out;
    close(fd);
    return out;
  }

  static int ClosedPort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    close(fd);
    return ntohs(addr.sin_port);
  }

  static std::string Post(const std::string& path, const std::string& body,
                          const std::string& extra_headers = "") {
    return absl::StrCat("POST ", path, " HTTP/1.1\r\nHost: x\r\nx-api-key: ptxbench-session\r\n",
                        extra_headers, "Content-Length: ", body.size(), "\r\n\r\n", body);
  }

  static std::string Message(const Json& extra = Json::object()) {
    Json body = {{"model", "claude-haiku"},
                 {"max_tokens", 64000},
                 {"stream", true},
                 {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
    body.update(extra);
    return body.dump();
  }

  std::string socket_;
};

TEST_F(ModelProxyTest, ForwardsWithTheRealKeyThePinnedModelAndCountsTheUsage) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(model, {/*tokens=*/10'000});
  const std::string answer = Send(Post(
      "/v1/messages",
      Message({{"tools", {{{"type", "web_search_20250305"}, {"name", "web_search"}}}}})));
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(answer, HasSubstr("message_stop"));
  ASSERT_EQ(model.requests().size(), 1u);
  EXPECT_EQ(model.requests()[0]["model"], "claude-pinned");
  EXPECT_EQ(model.requests()[0].value("tools", Json::array()), Json::array())
      << "the provider's web search is gone";
  EXPECT_THAT(model.headers()[0], HasSubstr("x-api-key: sk-real"));
  EXPECT_THAT(model.headers()[0], ::testing::Not(HasSubstr("ptxbench-session")));
  const ptxbench::v1::AgentUsage t = proxy->totals();
  EXPECT_EQ(t.model_calls(), 1);
  EXPECT_EQ(t.usage().input_tokens(), testing::ScriptedModel::kInputTokens);
  EXPECT_EQ(t.usage().output_tokens(), testing::ScriptedModel::kOutputTokens);
  EXPECT_DOUBLE_EQ(t.cost_usd(), (100 * 3.0 + 20 * 15.0) / 1e6);
  const std::vector<ModelProxy::Call> calls = proxy->calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_THAT(calls[0].edits, ::testing::Contains(HasSubstr("web_search")));
  EXPECT_THAT(calls[0].edits, ::testing::Contains(HasSubstr("max_tokens 64000 -> 10000")))
      << "capped to the tokens left";
  EXPECT_THAT(calls[0].request, ::testing::Not(HasSubstr("sk-real"))) << "the key is not recorded";
}

TEST_F(ModelProxyTest, RefusesEveryCallOnceTheTokenBudgetIsSpent) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(model, {/*tokens=*/150});
  EXPECT_THAT(Send(Post("/v1/messages", Message())), HasSubstr("HTTP/1.1 200"));
  EXPECT_FALSE(proxy->spent().has_value()) << "120 of 150 tokens";
  EXPECT_THAT(Send(Post("/v1/messages", Message())), HasSubstr("HTTP/1.1 200"));
  ASSERT_EQ(proxy->spent(), ptxbench::v1::AGENT_TOKEN_BUDGET);
  const std::string refused = Send(Post("/v1/messages", Message()));
  EXPECT_THAT(refused, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(refused, HasSubstr("invalid_request_error"));
  EXPECT_THAT(refused, HasSubstr("token budget of 150 spent (240 tokens)"));
  EXPECT_EQ(model.requests().size(), 2u) << "the refused call never left";
  EXPECT_EQ(proxy->totals().model_calls(), 2);
}

TEST_F(ModelProxyTest, TheModelCallLimitEndsTheSession) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(model, {/*tokens=*/10'000, /*cost_usd=*/0, /*model_calls=*/1});
  EXPECT_THAT(Send(Post("/v1/messages", Message())), HasSubstr("HTTP/1.1 200"));
  EXPECT_EQ(proxy->spent(), ptxbench::v1::AGENT_MODEL_CALL_LIMIT);
  EXPECT_THAT(Send(Post("/v1/messages", Message())), HasSubstr("model call limit of 1"));
}

TEST_F(ModelProxyTest, OnlyTheModelEndpointsAndPlainJsonPass) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(model, {/*tokens=*/10'000});
  EXPECT_THAT(Send(Post("/v1/files", "{}")), HasSubstr("HTTP/1.1 404"));
  EXPECT_THAT(Send("GET /v1/messages HTTP/1.1\r\nHost: x\r\n\r\n"), HasSubstr("HTTP/1.1 404"));
  EXPECT_THAT(Send(Post("/v1/messages", Message(), "Content-Encoding: gzip\r\n")),
              HasSubstr("HTTP/1.1 415"));
  EXPECT_THAT(Send(Post("/v1/messages", "[1,2")), HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(Send("NONSENSE\r\n\r\n"), HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(Send("POST /v1/messages HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n"),
              HasSubstr("HTTP/1.1 413"));
  EXPECT_TRUE(model.requests().empty()) << "nothing of it reached the model";
  EXPECT_EQ(proxy->totals().model_calls(), 0);
  // A chunked body is read whole; a token counter is free.
  const std::string body = Message();
  const std::string chunked = absl::StrCat(
      "POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
      absl::Hex(body.size() - 10), "\r\n", body.substr(0, body.size() - 10), "\r\n",
      absl::Hex(10), "\r\n", body.substr(body.size() - 10), "\r\n0\r\n\r\n");
  EXPECT_THAT(Send(chunked), HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(Send(Post("/v1/messages/count_tokens", Message())), HasSubstr("input_tokens"));
  EXPECT_EQ(proxy->totals().model_calls(), 1);
}

TEST_F(ModelProxyTest, AnUnreachableProviderIsABadGatewayAndCostsNothing) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  ModelProxy::Upstream up;
  up.wire = agents::Wire::kAnthropicMessages;
  // A loopback port nothing listens on: one the kernel just handed out and
  // took back (port 1 is a privileged port another root process may hold).
  up.base_url = absl::StrCat("http://127.0.0.1:", ClosedPort());
  up.model_id = "m";
  ModelProxy proxy(up, {/*tokens=*/100});
  ASSERT_TRUE(proxy.Listen(socket_));
  const std::string answer = Send(Post("/v1/messages", Message()));
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 502"));
  EXPECT_THAT(answer, HasSubstr("could not be reached"));
  EXPECT_EQ(proxy.totals().model_calls(), 0);
}

// A CLI acts on an answer once its last event arrives, and may call again
// while the provider's connection is still open: that answer's usage is
// already counted, and the next call is refused.
TEST_F(ModelProxyTest, AnAnswerCountsAsSoonAsItsUsageArrivesNotWhenItsConnectionCloses) {
  absl::Notification close_it;
  std::atomic<int> answers{0};
  httplib::Server upstream;
  upstream.Post("/v1/messages", [&](const httplib::Request&, httplib::Response& res) {
    ++answers;
    res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
      const std::string events =
          "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"
          "{\"input_tokens\":100}}}\n\n"
          "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":"
          "{\"output_tokens\":20}}\n\n"
          "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
      sink.write(events.data(), events.size());
      close_it.WaitForNotificationWithTimeout(absl::Seconds(30));  // held open
      sink.done();
      return true;
    });
  });
  const int port = upstream.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { upstream.listen_after_bind(); });
  ModelProxy::Upstream up;
  up.wire = agents::Wire::kAnthropicMessages;
  up.base_url = absl::StrCat("http://127.0.0.1:", port);
  up.model_id = "m";
  ModelProxy proxy(up, {/*tokens=*/120});
  ASSERT_TRUE(proxy.Listen(socket_));

  // The first answer, read up to its last event while the provider holds on.
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_.data(), socket_.size());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string request = Post("/v1/messages", Message());
  ASSERT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  std::string first;
  char buffer[4096];
  for (ssize_t n; first.find("message_stop") == std::string::npos &&
                  (n = read(fd, buffer, sizeof(buffer))) > 0;) {
    first.append(buffer, n);
  }
  ASSERT_THAT(first, HasSubstr("message_stop"));
  EXPECT_EQ(proxy.in_flight(), 1) << "the provider has not closed yet";
  EXPECT_EQ(proxy.spent(), ptxbench::v1::AGENT_TOKEN_BUDGET);
  const std::string second = Send(Post("/v1/messages", Message()));
  EXPECT_THAT(second, HasSubstr("token budget of 120 spent (120 tokens)"));
  EXPECT_EQ(answers.load(), 1) << "the second call never left";

  close_it.Notify();
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) first.append(buffer, n);
  close(fd);
  upstream.stop();
  serving.join();
  const ptxbench::v1::AgentUsage t = proxy.totals();
  EXPECT_EQ(t.model_calls(), 1);
  EXPECT_EQ(t.usage().input_tokens() + t.usage().output_tokens(), 120) << "counted once";
}

}  // namespace
}  // namespace ptxbench::agent_gateway
