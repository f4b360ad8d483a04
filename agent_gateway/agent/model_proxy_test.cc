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
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "daemon/http_thread.h"
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
                                    ModelProxy::Budget budget, CallPermits* permits = nullptr) {
    ModelProxy::Upstream up;
    up.wire = agents::Wire::kAnthropicMessages;
    up.base_url = absl::StrCat("http://127.0.0.1:", model.port());
    up.key_headers = {"x-api-key: sk-real"};
    up.model_id = "claude-pinned";
    up.price.input_per_mtok = 3.0;
    up.price.output_per_mtok = 15.0;
    up.model = "claude-registry-name";
    auto proxy = std::make_unique<ModelProxy>(up, budget, permits);
    EXPECT_TRUE(proxy->Listen(socket_));
    return proxy;
  }

  // A new connection to the proxy.
  int Connect() const {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socket_.data(), socket_.size());
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  }

  // Sends `raw` on a new connection; the whole answer.
  std::string Send(const std::string& raw) {
    const int fd = Connect();
    // The proxy may answer (and close) before it read all of a refused
    // request: what it did not read is not sent.
    for (size_t at = 0; at < raw.size();) {
      const ssize_t n = send(fd, raw.data() + at, raw.size() - at, MSG_NOSIGNAL);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
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
      "/v1/messages", Message({{"tools", {{{"name", "Bash"}, {"input_schema", Json::object()}}}}}),
      "anthropic-version: 2023-06-01\r\nanthropic-beta: claude-code-20250219, effort-2025-11-24\r\n"
      "x-stainless-os: Linux\r\n"));
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(answer, HasSubstr("message_stop"));
  ASSERT_EQ(model.requests().size(), 1u);
  EXPECT_EQ(model.requests()[0]["model"], "claude-pinned");
  EXPECT_EQ(model.requests()[0]["tools"].size(), 1u);
  EXPECT_THAT(model.headers()[0], HasSubstr("x-api-key: sk-real"));
  EXPECT_THAT(model.headers()[0], HasSubstr("anthropic-version: 2023-06-01"));
  EXPECT_THAT(model.headers()[0],
              HasSubstr("anthropic-beta: claude-code-20250219,effort-2025-11-24"))
      << "rebuilt from its list";
  EXPECT_THAT(model.headers()[0], ::testing::Not(HasSubstr("ptxbench-session")));
  EXPECT_THAT(model.headers()[0], ::testing::Not(HasSubstr("x-stainless"))) << "not on the list";
  const ptxbench::v1::AgentUsage t = proxy->totals();
  EXPECT_EQ(t.model_calls(), 1);
  EXPECT_EQ(t.usage().input_tokens(), testing::ScriptedModel::kInputTokens);
  EXPECT_EQ(t.usage().output_tokens(), testing::ScriptedModel::kOutputTokens);
  EXPECT_DOUBLE_EQ(t.cost_usd(), (100 * 3.0 + 20 * 15.0) / 1e6);
  const std::vector<ModelProxy::Call> calls = proxy->calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_THAT(calls[0].edits, ::testing::Contains("model claude-haiku -> claude-pinned"));
  // Capped to what the budget leaves after the prompt's bound (its bytes and
  // a margin).
  EXPECT_THAT(calls[0].edits, ::testing::Contains(HasSubstr("max_tokens 64000 -> 5")));
  EXPECT_GT(calls[0].reserved_tokens, 4096);
  EXPECT_LE(calls[0].reserved_tokens, 10'000);
  EXPECT_FALSE(calls[0].charged_reservation);
  EXPECT_THAT(calls[0].request, ::testing::Not(HasSubstr("sk-real"))) << "the key is not recorded";
}

// Permits that record what they are asked and grant after `denials` asks
// (never, when negative).
class RecordingPermits final : public CallPermits {
 public:
  explicit RecordingPermits(int denials) : denials_(denials) {}
  absl::StatusOr<Grant> TryAcquire(const std::string& model, int64_t tokens) override {
    absl::MutexLock lock(&mu_);
    asked_model = model;
    asked_tokens = tokens;
    Grant g;
    g.wait = absl::Milliseconds(20);
    if (denials_ < 0 || asks++ < denials_) return g;
    g.granted = true;
    g.permit.id = 7;
    return g;
  }
  void Release(const std::string&, const Permit& p, int64_t billed) override {
    absl::MutexLock lock(&mu_);
    released.push_back({p.id, billed});
  }
  absl::Mutex mu_;
  int asks = 0;
  std::string asked_model;
  int64_t asked_tokens = 0;
  std::vector<std::pair<uint64_t, int64_t>> released;

 private:
  const int denials_;
};

// Each model call waits for the fleet's permit for the registry's model,
// asked for the call's reservation, and gives it back with what was charged.
TEST_F(ModelProxyTest, AModelCallGoesUpstreamOnlyWithItsPermit) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  RecordingPermits permits(/*denials=*/3);
  auto proxy = Start(model, {/*tokens=*/10'000}, &permits);
  EXPECT_THAT(Send(Post("/v1/messages", Message(), "anthropic-version: 2023-06-01\r\n")),
              HasSubstr("HTTP/1.1 200"));
  ASSERT_EQ(model.requests().size(), 1u);
  absl::MutexLock lock(&permits.mu_);
  EXPECT_EQ(permits.asks, 4) << "asked again until granted";
  EXPECT_EQ(permits.asked_model, "claude-registry-name");
  EXPECT_EQ(permits.asked_tokens, proxy->calls()[0].reserved_tokens);
  ASSERT_EQ(permits.released.size(), 1u);
  EXPECT_EQ(permits.released[0].first, 7u);
  EXPECT_EQ(permits.released[0].second,
            testing::ScriptedModel::kInputTokens + testing::ScriptedModel::kOutputTokens);
}

// Never granted: the call waits while the session lasts, reaches nobody,
// and its reservation is freed when the session closes.
TEST_F(ModelProxyTest, WithoutAPermitNothingReachesTheProvider) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  RecordingPermits permits(/*denials=*/-1);
  auto proxy = Start(model, {/*tokens=*/10'000}, &permits);
  std::string answer;
  std::thread cli([&] {
    answer = Send(Post("/v1/messages", Message(), "anthropic-version: 2023-06-01\r\n"));
  });
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(model.requests().size(), 0u);
  proxy->Close(absl::Seconds(1));
  cli.join();
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 429"));
  EXPECT_THAT(answer, HasSubstr("no call permit"));
  EXPECT_EQ(model.requests().size(), 0u);
  EXPECT_EQ(proxy->totals().model_calls(), 0);
  absl::MutexLock lock(&permits.mu_);
  EXPECT_TRUE(permits.released.empty());
}

// A server tool is refused by name and never reaches the provider.
TEST_F(ModelProxyTest, AServerToolIsRefusedNotStripped) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(model, {/*tokens=*/10'000});
  const std::string answer = Send(Post(
      "/v1/messages",
      Message({{"tools", {{{"type", "web_search_20250305"}, {"name", "web_search"}}}}})));
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(answer, HasSubstr("runs at the provider"));
  EXPECT_TRUE(model.requests().empty());
  EXPECT_EQ(proxy->totals().model_calls(), 0);
}

// Near the end of the budget the proxy asks the provider to count the
// prompt, admits the call with the output that is left, and refuses the
// call that would not fit: a budget is never overshot.
TEST_F(ModelProxyTest, ACallIsAdmittedOnlyWhenItsWorstCaseFits) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(model, {/*tokens=*/150});
  EXPECT_THAT(Send(Post("/v1/messages", Message())), HasSubstr("HTTP/1.1 200"));
  EXPECT_FALSE(proxy->spent().has_value()) << "120 of 150 tokens";
  std::vector<ModelProxy::Call> calls = proxy->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].kind, ModelProxy::CallKind::kAdmissionCount) << "the bound did not fit";
  EXPECT_THAT(calls[1].edits, ::testing::Contains("max_tokens 64000 -> 50"))
      << "150 less the prompt's 100";
  const std::string refused = Send(Post("/v1/messages", Message()));
  EXPECT_THAT(refused, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(refused, HasSubstr("invalid_request_error"));
  EXPECT_THAT(refused, HasSubstr("30 tokens left, fewer than the next call's prompt of 100"));
  EXPECT_EQ(proxy->spent(), ptxbench::v1::AGENT_TOKEN_BUDGET);
  EXPECT_THAT(proxy->spent_reason(), HasSubstr("token budget of 150 spent"));
  EXPECT_EQ(model.requests().size(), 1u) << "the refused call never left";
  EXPECT_EQ(proxy->totals().model_calls(), 1);
  EXPECT_THAT(Send(Post("/v1/messages", Message())), HasSubstr("the session is over"));
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
  EXPECT_THAT(Send(Post("/v1/messages", Message(), "anthropic-beta: a,b c\r\n")),
              HasSubstr("anthropic-beta is not a list"));
  for (const char* beta : {"context-1m-2025-08-07", "fast-mode-2026-02-01",
                           "extended-cache-ttl-2025-04-11", "mcp-client-2025-04-04",
                           "files-api-2025-04-14"}) {
    EXPECT_THAT(Send(Post("/v1/messages", Message(),
                          absl::StrCat("anthropic-beta: claude-code-20250219,", beta, "\r\n"))),
                HasSubstr(absl::StrCat("the beta ", beta, " is not one a session may use")));
  }
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
  ModelProxy proxy(up, {/*tokens=*/100'000});
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
  upstream.Post("/v1/messages/count_tokens", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"input_tokens":100})", "application/json");
  });
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
  const int fd = Connect();
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

// A provider of the test's own making on 127.0.0.1, with what each test
// needs of its answers.
class Upstream {
 public:
  Upstream() { port_ = server.bind_to_any_port("127.0.0.1"); }
  void Start() { serving_.emplace(server); }
  ModelProxy::Upstream For(agents::Wire wire, const char* suffix = "") const {
    ModelProxy::Upstream up;
    up.wire = wire;
    up.base_url = absl::StrCat("http://127.0.0.1:", port_, suffix);
    up.model_id = "pinned";
    return up;
  }
  httplib::Server server;

 private:
  int port_ = 0;
  std::optional<daemon::HttpThread> serving_;  // after the server: stopped first
};

std::string Events(std::initializer_list<Json> events) {
  std::string out;
  for (const Json& e : events) absl::StrAppend(&out, "data: ", e.dump(), "\n\n");
  return out;
}

// 16 streamed calls at once against a budget of 5,000 tokens, each asking
// for 64,000 tokens of a provider that answers as many as it is allowed:
// what the provider reports stays within the budget, and the proxy counts
// all of it. (Before: each call was capped to the 4,880 left when it was
// admitted, and 79,800 tokens were spent.)
TEST_F(ModelProxyTest, CallsAtOnceShareWhatIsLeftAndNeverOvershoot) {
  Upstream upstream;
  std::atomic<int64_t> reported{0};
  upstream.server.Post("/v1/messages/count_tokens", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"input_tokens":50})", "application/json");
  });
  upstream.server.Post("/v1/messages", [&](const httplib::Request& req, httplib::Response& res) {
    const Json body = Json::parse(req.body);
    const int64_t out = body["max_tokens"].get<int64_t>();
    reported += 50 + out;
    absl::SleepFor(absl::Milliseconds(100));
    res.set_content(
        Events({{{"type", "message_start"}, {"message", {{"usage", {{"input_tokens", 50}}}}}},
                {{"type", "message_delta"}, {"usage", {{"output_tokens", out}}}},
                {{"type", "message_stop"}}}),
        "text/event-stream");
  });
  upstream.Start();
  ModelProxy proxy(upstream.For(agents::Wire::kAnthropicMessages), {/*tokens=*/5'000});
  ASSERT_TRUE(proxy.Listen(socket_));
  std::vector<std::thread> clients;
  std::atomic<int> answered{0}, refused{0};
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back([&] {
      const std::string answer = Send(Post("/v1/messages", Message()));
      (absl::StrContains(answer, "HTTP/1.1 200") ? answered : refused)++;
    });
  }
  for (std::thread& t : clients) t.join();
  const ptxbench::v1::AgentUsage t = proxy.totals();
  EXPECT_LE(reported.load(), 5'000) << "the provider spent past the budget";
  EXPECT_EQ(t.usage().input_tokens() + t.usage().output_tokens(), reported.load());
  EXPECT_GE(answered.load(), 1);
  EXPECT_GE(refused.load(), 1);
  EXPECT_EQ(proxy.spent(), ptxbench::v1::AGENT_TOKEN_BUDGET);
}

// A CLI that hangs up once it has the text, before the answer's last event:
// the proxy reads the answer to its end and counts it. (Before: the proxy
// stopped reading and 5 whole answers counted 0 tokens.)
TEST_F(ModelProxyTest, AnAnswerIsReadToItsEndWhenTheCliHangsUp) {
  Upstream upstream;
  upstream.server.Post("/v1/responses", [&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
      // More than the connection holds: the proxy meets the closed CLI.
      const std::string text = Events({{{"type", "response.output_text.delta"}, {"delta", "x"}},
                                       {{"type", "response.output_text.delta"},
                                        {"delta", std::string(400000, 'y')}}});
      sink.write(text.data(), text.size());
      absl::SleepFor(absl::Milliseconds(500));
      const std::string last = Events({{{"type", "response.completed"},
                                        {"response", {{"usage", {{"input_tokens", 1000},
                                                                 {"output_tokens", 2000}}}}}}});
      sink.write(last.data(), last.size());
      sink.done();
      return true;
    });
  });
  upstream.Start();
  ModelProxy proxy(upstream.For(agents::Wire::kOpenAIResponses, "/v1"), {/*tokens=*/1'000'000});
  ASSERT_TRUE(proxy.Listen(socket_));
  const int fd = Connect();
  const std::string request =
      Post("/v1/responses", R"({"model":"m","input":"hi","stream":true})");
  ASSERT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  char buffer[4096];
  std::string got;
  while (got.find("output_text.delta") == std::string::npos) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    ASSERT_GT(n, 0);
    got.append(buffer, n);
  }
  close(fd);  // the text is here: gone before the usage
  proxy.Close(absl::Seconds(10));
  const ptxbench::v1::AgentUsage t = proxy.totals();
  EXPECT_EQ(t.model_calls(), 1);
  EXPECT_EQ(t.usage().input_tokens(), 1000);
  EXPECT_EQ(t.usage().output_tokens(), 2000);
}

// Every answer shape counts: Gemini's streamGenerateContent without alt=sse
// answers one JSON array (before: 0 tokens), and an answer that never says
// its usage is charged the reservation it was admitted with.
TEST_F(ModelProxyTest, EveryAnswerShapeIsCountedOrChargedItsReservation) {
  Upstream upstream;
  upstream.server.Post(R"(/v1beta/models/pinned:streamGenerateContent)",
                       [](const httplib::Request& req, httplib::Response& res) {
                         if (req.has_param("alt")) {  // SSE that never says its usage
                           res.set_content("data: {\"candidates\":[]}\n\n", "text/event-stream");
                           return;
                         }
                         res.set_content(
                             R"([{"candidates":[{"content":{}}]},)"
                             R"({"candidates":[{"finishReason":"STOP"}],"usageMetadata":)"
                             R"({"promptTokenCount":300,"candidatesTokenCount":700}}])",
                             "application/json");
                       });
  upstream.Start();
  ModelProxy proxy(upstream.For(agents::Wire::kGeminiGenerate, "/v1beta"), {/*tokens=*/1'000'000});
  ASSERT_TRUE(proxy.Listen(socket_));
  const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}],)"
                           R"("generationConfig":{"maxOutputTokens":1000}})";
  EXPECT_THAT(Send(Post("/v1beta/models/other:streamGenerateContent", body)),
              HasSubstr("finishReason"));
  EXPECT_EQ(proxy.totals().usage().input_tokens() + proxy.totals().usage().output_tokens(), 1000);
  EXPECT_THAT(Send(Post("/v1beta/models/other:streamGenerateContent?alt=sse", body)),
              HasSubstr("HTTP/1.1 200"));
  const std::vector<ModelProxy::Call> calls = proxy.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_TRUE(calls[1].charged_reservation);
  EXPECT_EQ(calls[1].usage.output_tokens(), 1000) << "the output it was admitted with";
  EXPECT_GE(calls[1].usage.input_tokens(), static_cast<int64_t>(body.size()));
  EXPECT_EQ(proxy.totals().model_calls(), 2);
}

// The free token counters are rate-limited and each is recorded as a call of
// its own (before: 300 in 1.3 s, each body kept for the session).
TEST_F(ModelProxyTest, TokenCountersAreRateLimitedAndRecorded) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(model, {/*tokens=*/1'000'000});
  int passed = 0, limited = 0;
  for (int i = 0; i < 30; ++i) {
    const std::string answer = Send(Post("/v1/messages/count_tokens", Message()));
    passed += absl::StrContains(answer, "HTTP/1.1 200");
    limited += absl::StrContains(answer, "HTTP/1.1 429");
  }
  EXPECT_GE(passed, ModelProxy::kCounterBurst);
  EXPECT_LE(passed, ModelProxy::kCounterBurst + 3) << "about one a second after the burst";
  EXPECT_EQ(passed + limited, 30);
  EXPECT_EQ(proxy->token_count_calls(), passed);
  EXPECT_EQ(proxy->calls().size(), 30u);
  EXPECT_EQ(proxy->totals().model_calls(), 0);
}

// What arrives is hostile: none of it reaches the provider, none of it ends
// the proxy, and what is kept of it stays within the record's bounds.
TEST_F(ModelProxyTest, HostileRequestsAreRefusedAndTheProxyServesOn) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(model, {/*tokens=*/1'000'000});
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  const std::vector<std::string> attacks = {
      Post("/v1/messages", R"({"model": 0})"),
      Post("/v1/messages", R"({"tools":[{"type":7}]})"),
      Post("/v1/messages", deep),
      Post("/v1/messages#/v1/messages/count_tokens", Message()),
      Post("/v1/messages", Message(), "anthropic-beta: x\nGET /v1/organizations/api_keys HTTP/1.1\r\n"),
      Post("/v1/messages/batches", Message()),
      absl::StrCat("POST /v1/messages HTTP/1.1\r\nContent-Length: ", 17 << 20, "\r\n\r\n",
                   std::string(17 << 20, 'x')),
  };
  for (const std::string& attack : attacks) {
    const std::string answer = Send(attack);
    EXPECT_THAT(answer, ::testing::AnyOf(HasSubstr("HTTP/1.1 400"), HasSubstr("HTTP/1.1 404"),
                                         HasSubstr("HTTP/1.1 413")))
        << attack.substr(0, 80);
  }
  EXPECT_TRUE(model.requests().empty()) << "nothing of it reached the provider";
  EXPECT_THAT(Send(Post("/v1/messages", Message())), HasSubstr("HTTP/1.1 200")) << "it serves on";
  // Bodies are kept for the record only up to its bounds.
  const std::string big = Message({{"system", std::string(1 << 20, 'a')}});
  for (int i = 0; i < 8; ++i) Send(Post("/v1/messages", big));
  size_t kept = 0;
  for (const ModelProxy::Call& c : proxy->calls()) {
    EXPECT_LE(c.request.size(), ModelProxy::kRecordedBody);
    kept += c.request.size() + c.response.size();
  }
  EXPECT_LE(kept, ModelProxy::kRecordedBodies);
}

}  // namespace
}  // namespace ptxbench::agent_gateway
