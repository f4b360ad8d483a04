// The model proxy's socket attacked directly, where telling needs no CLI:
// every field of the three APIs' real request shapes replaced by a value of
// another type; calls made at once against a call limit; a client that
// never reads its answer; heads that arrive a byte a second; the framings a
// provider answers in. The proxy runs in-process (model_proxy.h) in front of
// a scripted model (testing/scripted_model.h).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent_gateway/agent/model_proxy.h"
#include "nlohmann/json.hpp"
#include "testing/scripted_model.h"

namespace ptxbench {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using agent_gateway::ModelProxy;
using testing::ScriptedModel;

class ProxyAttackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = absl::StrCat(::testing::TempDir(), "/attack-", getpid(), ".sock");
  }
  void TearDown() override { std::filesystem::remove(socket_); }

  // A proxy of `wire` in front of a provider on `port` (its API's root as
  // the registry names it).
  std::unique_ptr<ModelProxy> Start(agents::Wire wire, int port, ModelProxy::Budget budget) {
    const char* root = wire == agents::Wire::kGeminiGenerate    ? "/v1beta"
                       : wire == agents::Wire::kOpenAIResponses ? "/v1"
                                                                : "";
    auto proxy = std::make_unique<ModelProxy>(
        ModelProxy::Upstream{.wire = wire,
                             .base_url = absl::StrCat("http://127.0.0.1:", port, root),
                             .key_headers = {"x-api-key: sk-real"},
                             .model_id = "pinned-model",
                             .price = {.input_per_mtok = 1.0, .output_per_mtok = 2.0}},
        budget);
    EXPECT_TRUE(proxy->Listen(socket_));
    return proxy;
  }

  int Connect(int rcvbuf = 0) const {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socket_.data(), socket_.size());
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  }

  // Sends `raw` on a new connection; what came back within `patience` (""
  // for a connection closed unanswered).
  std::string Send(const std::string& raw, absl::Duration patience = absl::Seconds(60)) const {
    const int fd = Connect();
    if (fd < 0) return "";
    (void)!write(fd, raw.data(), raw.size());
    std::string out;
    const absl::Time end = absl::Now() + patience;
    char buffer[1 << 16];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      const int64_t left = absl::ToInt64Milliseconds(end - absl::Now());
      if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) break;
      const ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n <= 0) break;
      out.append(buffer, static_cast<size_t>(n));
    }
    close(fd);
    return out;
  }

  static std::string Post(const std::string& target, const std::string& body) {
    return absl::StrCat("POST ", target,
                        " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n",
                        "Content-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
  }

  static std::string Route(agents::Wire wire) {
    switch (wire) {
      case agents::Wire::kAnthropicMessages:
        return "/v1/messages?beta=true";
      case agents::Wire::kOpenAIResponses:
        return "/v1/responses";
      case agents::Wire::kGeminiGenerate:
        return "/v1beta/models/scripted-agent-model:streamGenerateContent?alt=sse";
    }
    return "";
  }

  // A request of each API as its pinned CLI sends one (the fields each
  // sent in agent_attack_test's sessions; values trimmed): a conversation
  // with a tool call and its result, tools, the answer's settings.
  static Json RealShape(agents::Wire wire) {
    switch (wire) {
      case agents::Wire::kAnthropicMessages:
        return Json::parse(R"({
          "model": "claude-x", "max_tokens": 32000, "stream": true,
          "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.332;"},
                     {"type": "text", "text": "You write kernels.",
                      "cache_control": {"type": "ephemeral"}}],
          "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Write a GEMM."}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
              "name": "Bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
              "content": "kernel.cu", "is_error": false}]}],
          "tools": [{"name": "Bash", "description": "Runs a command.",
                     "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                                      "required": ["command"]}}],
          "metadata": {"user_id": "{\"session_id\":\"s\"}"},
          "thinking": {"type": "adaptive", "display": "updates"},
          "output_config": {"effort": "high"},
          "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}})");
      case agents::Wire::kOpenAIResponses:
        return Json::parse(R"({
          "model": "gpt-x", "stream": true, "store": false,
          "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are a coding agent."}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Write a GEMM."}]},
            {"type": "function_call", "call_id": "call_1", "name": "exec_command",
             "arguments": "{\"cmd\":\"ls\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "kernel.cu"}],
          "tools": [{"type": "function", "name": "exec_command", "description": "Runs a command.",
                     "strict": false, "parameters": {"type": "object",
                       "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}],
          "tool_choice": "auto", "parallel_tool_calls": true,
          "reasoning": {"summary": "auto"}, "include": ["reasoning.encrypted_content"],
          "prompt_cache_key": "k", "client_metadata": {"session_id": "s"}})");
      case agents::Wire::kGeminiGenerate:
        return Json::parse(R"({
          "contents": [
            {"role": "user", "parts": [{"text": "Write a GEMM."}]},
            {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command",
              "args": {"command": "ls"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
              "response": {"output": "kernel.cu"}}}]}],
          "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]},
          "tools": [{"functionDeclarations": [{"name": "run_shell_command",
            "description": "Runs a command.", "parametersJsonSchema": {"type": "object",
              "properties": {"command": {"type": "string"}}}}]}],
          "generationConfig": {"temperature": 1, "topP": 0.95, "topK": 64,
                               "thinkingConfig": {"includeThoughts": true}}})");
    }
    return Json::object();
  }

  std::string socket_;
};

// Every node of each API's real request shape replaced, one at a time, by a
// value of each JSON type (and a nested one): each request gets an HTTP
// answer, and the proxy serves a normal call at the end. Today
// {"model": 0} and a tool's "type": 7 abort the process.
TEST_F(ProxyAttackTest, EveryFieldOfARealRequestReplacedByAnotherTypeNeverCrashesTheProxy) {
  Json replacements = Json::parse(
      R"([0, -1, 1.5, 1e300, 18446744073709551615, "", "x", null, true, [], {}, [7], {"type": 7}])");
  Json nested = 1;
  for (int i = 0; i < 64; ++i) nested = Json::array({nested});
  replacements.push_back(nested);
  for (agents::Wire wire : {agents::Wire::kAnthropicMessages, agents::Wire::kOpenAIResponses,
                            agents::Wire::kGeminiGenerate}) {
    SCOPED_TRACE(agents::WireTitle(wire));
    ScriptedModel model(wire, {});
    auto proxy = Start(wire, model.port(), {/*tokens=*/1'000'000'000});
    const Json shape = RealShape(wire);
    // Every node: the leaves flatten() names, and each object and array
    // above them.
    std::set<std::string> pointers;
    const Json leaves = shape.flatten();
    for (const auto& [leaf, value] : leaves.items()) {
      for (std::string p = leaf; !p.empty(); p = p.substr(0, p.rfind('/'))) pointers.insert(p);
    }
    int sent = 0, answered = 0;
    for (const std::string& pointer : pointers) {
      for (const Json& value : replacements) {
        Json body = shape;
        body[Json::json_pointer(pointer)] = value;
        ++sent;
        answered += absl::StartsWith(Send(Post(Route(wire), body.dump())), "HTTP/1.1 ");
      }
    }
    EXPECT_EQ(answered, sent);
    EXPECT_THAT(Send(Post(Route(wire), shape.dump())), HasSubstr("HTTP/1.1 200"))
        << "a normal call after " << sent << " mutated ones";
    proxy.reset();
    std::filesystem::remove(socket_);
  }
}

// A call limit of 3 and 16 calls at once, each answered slowly: the
// provider answers at most 3.
TEST_F(ProxyAttackTest, ACallLimitHoldsAgainstCallsMadeAtOnce) {
  ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(agents::Wire::kAnthropicMessages, model.port(),
                     {/*tokens=*/1'000'000, /*cost_usd=*/0, /*model_calls=*/3});
  std::vector<std::thread> calls;
  for (int i = 0; i < 16; ++i) {
    calls.emplace_back([&, i] {
      const Json body = {
          {"model", "m"},
          {"max_tokens", 64},
          {"stream", true},
          {"messages", {{{"role", "user"}, {"content", absl::StrCat("@ptxb:slow ", i)}}}}};
      Send(Post("/v1/messages", body.dump()));
    });
  }
  for (std::thread& t : calls) t.join();
  EXPECT_LE(model.received().size(), 3u);
  EXPECT_LE(proxy->totals().model_calls(), 3);
}

// A client that sends a call and never reads (its receive buffer small, the
// answer 2 MiB) has its answer counted as soon as the provider finished it:
// the proxy reads the provider's answer to its end whatever the client
// does. Today the proxy blocks writing to the client and counts nothing
// until the client goes away.
TEST_F(ProxyAttackTest, AnAnswerItsClientNeverReadsIsCountedAnyway) {
  ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(agents::Wire::kAnthropicMessages, model.port(), {/*tokens=*/1'000'000});
  const int fd = Connect(/*rcvbuf=*/4096);
  ASSERT_GE(fd, 0);
  const Json body = {{"model", "m"},
                     {"max_tokens", 64},
                     {"stream", true},
                     {"messages", {{{"role", "user"}, {"content", "@ptxb:bulk"}}}}};
  const std::string request = Post("/v1/messages", body.dump());
  ASSERT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  const absl::Time end = absl::Now() + absl::Seconds(15);
  int64_t counted = 0;
  while (absl::Now() < end) {
    const ptxbench::v1::Usage u = proxy->totals().usage();
    counted = u.input_tokens() + u.output_tokens();
    if (counted > 0 && counted >= model.billed_tokens()) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(model.billed().size(), 1u);
  EXPECT_GE(counted, model.billed_tokens()) << "the answer the client holds unread was not counted";
  close(fd);
}

// 16 connections (the proxy's most) that send their heads a byte a second
// do not keep the CLI's call from an answer for more than 30 s: a head has
// a deadline of its own, or slow heads do not hold the places. Today each
// slow head holds a place for as long as its bytes keep coming (the proxy's
// 60 s is per read), and the CLI's call is closed unanswered.
TEST_F(ProxyAttackTest, SlowHeadsDoNotLockOutTheClisCall) {
  ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  auto proxy = Start(agents::Wire::kAnthropicMessages, model.port(), {/*tokens=*/1'000'000});
  std::atomic<bool> stop{false};
  std::vector<std::thread> slow;
  for (int i = 0; i < ModelProxy::kMaxConnections; ++i) {
    slow.emplace_back([&] {
      const int fd = Connect();
      const std::string head = "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-pad: ";
      for (size_t at = 0; !stop && fd >= 0; ++at) {
        if (send(fd, at < head.size() ? &head[at] : "a", 1, MSG_NOSIGNAL) != 1) break;
        for (int t = 0; t < 10 && !stop; ++t) absl::SleepFor(absl::Milliseconds(100));
      }
      if (fd >= 0) close(fd);
    });
  }
  absl::SleepFor(absl::Seconds(2));  // every place taken
  const Json body = {{"model", "m"},
                     {"max_tokens", 64},
                     {"stream", true},
                     {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  const absl::Time start = absl::Now();
  std::string answer;
  while (absl::Now() - start < absl::Seconds(30) && answer.empty()) {
    answer = Send(Post("/v1/messages", body.dump()), absl::Seconds(20));
    if (answer.empty()) absl::SleepFor(absl::Milliseconds(500));  // closed unanswered: again
  }
  stop = true;
  for (std::thread& t : slow) t.join();
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 200")) << "no answer within 30 s of trying";
}

// A provider's answers in each framing it may use, counted in full: server-
// sent events with CRLF line ends, delivered a byte at a time; Gemini's
// stream without alt=sse (one JSON array) and its plain answer; Anthropic's
// and Responses' plain answers.
TEST_F(ProxyAttackTest, EveryFramingOfAProvidersAnswerIsCounted) {
  // CRLF events a byte at a time, from a provider of its own.
  httplib::Server upstream;
  upstream.Post("/v1/messages", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
      const std::string events =
          "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"
          "{\"input_tokens\":100,\"output_tokens\":1}}}\r\n\r\n"
          "event: message_delta\r\ndata: {\"type\":\"message_delta\",\"usage\":"
          "{\"output_tokens\":20}}\r\n\r\n"
          "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";
      for (char c : events) {
        if (!sink.write(&c, 1)) return false;
      }
      sink.done();
      return true;
    });
  });
  const int port = upstream.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { upstream.listen_after_bind(); });
  {
    auto proxy = Start(agents::Wire::kAnthropicMessages, port, {/*tokens=*/1'000'000});
    const Json body = {{"model", "m"},
                       {"max_tokens", 64},
                       {"stream", true},
                       {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
    EXPECT_THAT(Send(Post("/v1/messages", body.dump())), HasSubstr("HTTP/1.1 200"));
    const ptxbench::v1::Usage u = proxy->totals().usage();
    EXPECT_EQ(u.input_tokens() + u.output_tokens(), 120) << "CRLF events, a byte at a time";
  }
  upstream.stop();
  serving.join();
  std::filesystem::remove(socket_);

  struct Case {
    agents::Wire wire;
    std::string target;
    Json body;
  };
  const Json gemini = {{"contents", {{{"role", "user"}, {"parts", {{{"text", "@ptxb:plain"}}}}}}}};
  const Case cases[] = {
      {agents::Wire::kGeminiGenerate, "/v1beta/models/m:streamGenerateContent", gemini},
      {agents::Wire::kGeminiGenerate, "/v1beta/models/m:generateContent", gemini},
      {agents::Wire::kAnthropicMessages,
       "/v1/messages",
       {{"model", "m"},
        {"max_tokens", 64},
        {"messages", {{{"role", "user"}, {"content", "@ptxb:plain"}}}}}},
      {agents::Wire::kOpenAIResponses,
       "/v1/responses",
       {{"model", "m"}, {"input", "@ptxb:plain"}, {"stream", false}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target);
    ScriptedModel model(c.wire, {});
    auto proxy = Start(c.wire, model.port(), {/*tokens=*/1'000'000});
    EXPECT_THAT(Send(Post(c.target, c.body.dump())), HasSubstr("HTTP/1.1 200"));
    const ptxbench::v1::Usage u = proxy->totals().usage();
    EXPECT_EQ(u.input_tokens() + u.output_tokens(), model.billed_tokens());
    EXPECT_EQ(model.billed().size(), 1u);
    proxy.reset();
    std::filesystem::remove(socket_);
  }
}

}  // namespace
}  // namespace ptxbench
