// A real gateway (ptxbench-gateway without --simulate) and a scheduler against
// fake servers speaking each provider's wire format (OpenAI chat completions,
// Anthropic Messages, Gemini generateContent), one parameterized suite for
// the three: multi-turn trajectories carry their context, a truncated answer
// is recorded as such, usage and cost add up per experiment, a 429 is asked
// again after its Retry-After, an auth error and a context-window error end
// the trajectory after one request, and the API key appears nowhere in the
// database or the logs. The answers hold no code, so no worker is needed.
#include <stdlib.h>

#include <chrono>
#include <functional>
#include <ostream>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent_gateway/testing/fake_model_server.h"
#include "gtest/gtest.h"
#include "scheduler/store/schema.h"
#include "testing/unused_port.h"
#include "tests/cluster.h"
#include "tests/gateway_test_util.h"

namespace ptxbench::testing {
namespace {

using agent_gateway::testing_support::AnthropicMessage;
using agent_gateway::testing_support::Completion;
using agent_gateway::testing_support::FakeModelServer;
using agent_gateway::testing_support::FakeUsage;
using agent_gateway::testing_support::GeminiAnswer;
using nlohmann::json;

// One provider's wire format, as the fake server speaks it.
struct Shape {
  std::string provider;  // the registry's "provider"
  std::string key_env;
  std::string key;  // distinctive, so a leak is found by a plain search
  // The registry's base_url for a server at `root`, and the path the
  // gateway must post to.
  std::function<std::string(const std::string& root)> base_url;
  std::string path;
  // The header carrying the key, and its expected value.
  std::string key_header;
  std::string key_value;
  // A success body; `truncated` picks the provider's "ran out of tokens".
  std::function<std::string(const std::string& text, bool truncated, const FakeUsage&)> answer;
  // The earlier answers a request carries (the assistant/model turns).
  std::function<std::vector<std::string>(const json& body)> earlier_answers;
  // Whether the provider reports reasoning tokens apart (Anthropic does not).
  bool counts_reasoning = true;
  // Error bodies in the provider's words.
  std::string rate_limited;
  int auth_status = 401;
  std::string auth_error;  // may echo the key, as OpenAI's does
  std::string auth_said;   // a phrase of it the trajectory's reason must quote
  std::string context_error;
  std::string context_said;
};

// gtest prints a parameter in test names (ctest lists them): the provider.
void PrintTo(const Shape& shape, std::ostream* out) { *out << shape.provider; }

std::vector<std::string> RoleContents(const json& list, const std::string& role) {
  std::vector<std::string> out;
  for (const json& m : list) {
    if (m.value("role", "") == role) out.push_back(m.value("content", ""));
  }
  return out;
}

Shape OpenAi() {
  Shape s;
  s.provider = "openai";
  s.key_env = "PTXB_SHAPE_OPENAI_KEY";
  s.key = "sk-openai-e2e-91c4d7a2";
  s.base_url = [](const std::string& root) { return root + "/v1"; };
  s.path = "/v1/chat/completions";
  s.key_header = "Authorization";
  s.key_value = "Bearer " + s.key;
  s.answer = [](const std::string& text, bool truncated, const FakeUsage& u) {
    return Completion(text, truncated ? "length" : "stop", u);
  };
  s.earlier_answers = [](const json& body) { return RoleContents(body["messages"], "assistant"); };
  s.rate_limited = R"({"error": {"message": "Rate limit reached for requests",
      "type": "requests", "code": "rate_limit_exceeded"}})";
  s.auth_error = R"({"error": {"message": "Incorrect API key provided: )" + s.key +
                 R"(. You can find your API key at https://platform.openai.com/account/api-keys.", )"
                 R"("type": "invalid_request_error", "code": "invalid_api_key"}})";
  s.auth_said = "Incorrect API key provided";
  s.context_error =
      R"({"error": {"message": "This model's maximum context length is 128000 tokens. )"
      R"(However, your messages resulted in 131072 tokens.", "type": "invalid_request_error", )"
      R"("param": "messages", "code": "context_length_exceeded"}})";
  s.context_said = "maximum context length is 128000";
  return s;
}

Shape Anthropic() {
  Shape s;
  s.provider = "anthropic";
  s.key_env = "PTXB_SHAPE_ANTHROPIC_KEY";
  s.key = "sk-ant-e2e-5b8e02f1";
  s.base_url = [](const std::string& root) { return root; };
  s.path = "/v1/messages";
  s.key_header = "x-api-key";
  s.key_value = s.key;
  s.answer = [](const std::string& text, bool truncated, const FakeUsage& u) {
    return AnthropicMessage(text, truncated ? "max_tokens" : "end_turn", u);
  };
  s.earlier_answers = [](const json& body) { return RoleContents(body["messages"], "assistant"); };
  s.counts_reasoning = false;
  s.rate_limited = R"({"type": "error", "error": {"type": "rate_limit_error",
      "message": "Number of requests has exceeded your rate limit"}})";
  s.auth_error = R"({"type": "error", "error": {"type": "authentication_error",
      "message": "invalid x-api-key"}})";
  s.auth_said = "invalid x-api-key";
  s.context_error = R"({"type": "error", "error": {"type": "invalid_request_error",
      "message": "prompt is too long: 215000 tokens > 200000 maximum"}})";
  s.context_said = "215000 tokens > 200000 maximum";
  return s;
}

Shape Gemini() {
  Shape s;
  s.provider = "gemini";
  s.key_env = "PTXB_SHAPE_GEMINI_KEY";
  s.key = "AIza-gemini-e2e-7730c6";
  s.base_url = [](const std::string& root) { return root + "/v1beta"; };
  s.path = "/v1beta/models/served-model-1:generateContent";
  s.key_header = "x-goog-api-key";
  s.key_value = s.key;
  s.answer = [](const std::string& text, bool truncated, const FakeUsage& u) {
    return GeminiAnswer(text, truncated ? "MAX_TOKENS" : "STOP", u);
  };
  s.earlier_answers = [](const json& body) {
    std::vector<std::string> out;
    for (const json& c : body["contents"]) {
      if (c.value("role", "") == "model") out.push_back(c["parts"][0].value("text", ""));
    }
    return out;
  };
  // Gemini says when to retry in RetryInfo; the test also sends Retry-After.
  s.rate_limited = R"({"error": {"code": 429, "message": "Resource has been exhausted",
      "status": "RESOURCE_EXHAUSTED", "details": [{"@type":
      "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}]}})";
  // What Gemini really answers for a bad key: 400, not 401.
  s.auth_status = 400;
  s.auth_error =
      R"({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", )"
      R"("status": "INVALID_ARGUMENT", "details": [{"@type": )"
      R"("type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]}})";
  s.auth_said = "API key not valid";
  s.context_error =
      R"({"error": {"code": 400, "message": "The input token count (1200000) exceeds the )"
      R"(maximum number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}})";
  s.context_said = "exceeds the maximum number of tokens allowed";
  return s;
}

// The usage the fake server reports for turn `t`: different per turn, so a
// sum that counts a turn twice or drops one is caught.
FakeUsage UsageOfTurn(int t) {
  FakeUsage u;
  u.input = 1000 + 1000 * t;
  u.cached = 200 * (t + 1);
  u.output = 500 + 100 * t;
  u.reasoning = 100;
  return u;
}

// Price of the registry entry below, $ per million tokens; reasoning is
// priced as output.
double CostOf(const FakeUsage& u) {
  return ((u.input - u.cached) * 2.0 + u.cached * 0.5 + u.output * 8.0) / 1e6;
}

class GatewayProviderTest : public ::testing::TestWithParam<Shape> {
 protected:
  GatewayProviderTest() : shape_(GetParam()), cluster_("gw_" + shape_.provider + "_" + Name()) {}

  void SetUp() override { setenv(shape_.key_env.c_str(), shape_.key.c_str(), 1); }

  // At the end of every test: the key reached the provider, and nowhere else.
  void TearDown() override {
    for (const httplib::Request& r : server_.Requests()) {
      EXPECT_EQ(r.path, shape_.path);
      EXPECT_EQ(r.get_header_value(shape_.key_header.c_str()), shape_.key_value);
    }
    EXPECT_EQ(FilesContaining(cluster_, shape_.key), std::vector<std::string>())
        << "the API key leaked";
  }

  // The test's name without its parameter ("Test/openai" -> "Test").
  static std::string Name() {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    return name.substr(0, name.find('/'));
  }

  // Scheduler (quick retries: the Retry-After decides) and a gateway
  // serving "fake-model".
  void Start() {
    ASSERT_TRUE(cluster_.StartScheduler({"--backoff-base-ms", "100"})) << cluster_.SchedulerLogTail();
    const std::string registry = WriteRegistry(
        cluster_, "fake-model", shape_.provider, shape_.base_url(server_.root()), shape_.key_env,
        {{"price", {{"input_per_mtok", 2.0}, {"output_per_mtok", 8.0}, {"cached_input_per_mtok", 0.5}}}});
    status_port_ = UnusedPort();
    cluster_.AddRealGateway({"--models", registry, "--serve", "fake-model", "--slots", "4",
                             "--status-listen", "127.0.0.1:" + std::to_string(status_port_)});
  }

  // The gateway's GET `path` on its status address.
  std::string StatusPage(const std::string& path) {
    httplib::Client client("127.0.0.1", status_port_);
    auto res = client.Get(path.c_str());
    return res ? std::to_string(res->status) + " " + res->body : "no answer";
  }

  // Runs an experiment to its end; the status (null when it did not end).
  json Run(int samples, int turns, int timeout_s = 60) {
    const std::string exp = SubmitSpec(cluster_, "providers", "fake-model", samples, turns);
    EXPECT_FALSE(exp.empty()) << cluster_.SchedulerLogTail();
    if (exp.empty()) return nullptr;
    experiment_ = exp;
    json status = cluster_.WaitFinished(exp, timeout_s);
    EXPECT_EQ(status["trajectories"]["terminal"], samples)
        << status.dump() << Tail(cluster_.dir() + "/gateway0.log");
    return status;
  }

  json List() {
    CommandResult r = cluster_.Cli({"list", experiment_, "--output", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(r.out, nullptr, false);
  }

  json Show(const std::string& trajectory) {
    CommandResult r = cluster_.Cli({"show", trajectory, "--output", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(r.out, nullptr, false);
  }

  // Answers every request with `status` and `body`.
  void AnswerAll(int status, const std::string& body) {
    server_.Answer([status, body](const httplib::Request&, httplib::Response& res) {
      res.status = status;
      res.set_content(body, "application/json");
    });
  }

  const Shape shape_;
  int status_port_ = 0;
  FakeModelServer server_;
  Cluster cluster_;
  std::string experiment_;
};

TEST_P(GatewayProviderTest, MultiTurnAnswersWithUsageAndCost) {
  const Shape& shape = shape_;
  // Turn 0 is cut off at the token limit, turn 1 ends normally.
  server_.Answer([shape](const httplib::Request& req, httplib::Response& res) {
    const int turn = static_cast<int>(shape.earlier_answers(json::parse(req.body)).size());
    res.set_content(shape.answer("Answer of turn " + std::to_string(turn) + ", no code yet.",
                                 turn == 0, UsageOfTurn(turn)),
                    "application/json");
  });
  Start();
  json status = Run(/*samples=*/2, /*turns=*/2);
  ASSERT_EQ(status["trajectories"]["terminal"], 2);
  EXPECT_EQ(status["trajectories"]["by_state"].value("LIMITS_EXCEEDED", 0), 2) << status.dump();
  EXPECT_EQ(status["turns"]["completed"], 4);
  EXPECT_FALSE(status["simulated"].get<bool>());
  ASSERT_EQ(server_.Requests().size(), 4u) << "one model call per turn";
  // Turn 1 carried turn 0's answer text (not its reasoning).
  int second_turns = 0;
  for (const httplib::Request& r : server_.Requests()) {
    const std::vector<std::string> earlier = shape.earlier_answers(json::parse(r.body));
    if (earlier.empty()) continue;
    ++second_turns;
    EXPECT_EQ(earlier, std::vector<std::string>{"Answer of turn 0, no code yet."}) << r.body;
  }
  EXPECT_EQ(second_turns, 2);

  // Per call: finish reason, usage and cost as the provider reported them;
  // the trajectories' and the experiment's cost are their sums.
  json list = List();
  ASSERT_EQ(list["trajectories"].size(), 2u) << list.dump();
  double turn_cost_sum = 0, trajectory_cost_sum = 0;
  int64_t input = 0, cached = 0, output = 0, reasoning = 0;
  for (const json& t : list["trajectories"]) {
    json shown = Show(t["trajectory"].get<std::string>());
    ASSERT_EQ(shown["turns"].size(), 2u) << shown.dump();
    double this_trajectory = 0;
    for (int i = 0; i < 2; ++i) {
      const json& turn = shown["turns"][i];
      const FakeUsage want = UsageOfTurn(i);
      EXPECT_EQ(turn["finish_reason"], i == 0 ? "length" : "stop") << turn.dump();
      EXPECT_EQ(turn["provider"], shape.provider);
      EXPECT_EQ(turn["usage"]["input_tokens"], want.input) << turn.dump();
      EXPECT_EQ(turn["usage"]["cached_tokens"], want.cached) << turn.dump();
      EXPECT_EQ(turn["usage"]["output_tokens"], want.output) << turn.dump();
      EXPECT_EQ(turn["usage"]["reasoning_tokens"], shape.counts_reasoning ? want.reasoning : 0)
          << turn.dump();
      EXPECT_NEAR(turn["cost_usd"].get<double>(), CostOf(want), 1e-12) << turn.dump();
      this_trajectory += turn["cost_usd"].get<double>();
      input += turn["usage"]["input_tokens"].get<int64_t>();
      cached += turn["usage"]["cached_tokens"].get<int64_t>();
      output += turn["usage"]["output_tokens"].get<int64_t>();
      reasoning += turn["usage"]["reasoning_tokens"].get<int64_t>();
    }
    EXPECT_NEAR(t["cost_usd"].get<double>(), this_trajectory, 1e-12) << t.dump();
    turn_cost_sum += this_trajectory;
    trajectory_cost_sum += t["cost_usd"].get<double>();
  }
  EXPECT_EQ(input, 2 * (UsageOfTurn(0).input + UsageOfTurn(1).input));
  EXPECT_EQ(cached, 2 * (UsageOfTurn(0).cached + UsageOfTurn(1).cached));
  EXPECT_EQ(output, 2 * (UsageOfTurn(0).output + UsageOfTurn(1).output));
  EXPECT_EQ(reasoning, shape.counts_reasoning ? 4 * 100 : 0);
  // (800·2 + 200·0.5 + 500·8 + 1600·2 + 400·0.5 + 600·8) / 1e6 = $0.0139 per trajectory.
  EXPECT_NEAR(status["cost_usd"].get<double>(), 2 * 0.0139, 1e-9);
  EXPECT_NEAR(status["cost_usd"].get<double>(), turn_cost_sum, 1e-9);
  EXPECT_NEAR(status["cost_usd"].get<double>(), trajectory_cost_sum, 1e-9);
  // The gateway's own account agrees.
  EXPECT_EQ(StatusPage("/healthz"), "200 ok\n");
  const std::string metrics = StatusPage("/metrics");
  EXPECT_NE(metrics.find("ptxbench_gateway_answers_total{model=\"fake-model\"} 4\n"),
            std::string::npos) << metrics;
  EXPECT_NE(metrics.find("ptxbench_gateway_truncated_total{model=\"fake-model\"} 2\n"),
            std::string::npos) << metrics;
  EXPECT_NE(metrics.find("ptxbench_gateway_cost_usd_total{model=\"fake-model\"} 0.0278\n"),
            std::string::npos) << metrics;
}

// A 429 with Retry-After: 2 is asked again no sooner than 2 s later (the
// scheduler's own backoff is 100 ms here), and the turn gets one answer.
TEST_P(GatewayProviderTest, RateLimitIsRetriedAfterRetryAfter) {
  const Shape& shape = shape_;
  server_.Answer([shape, this](const httplib::Request&, httplib::Response& res) {
    if (server_.RequestCount() == 1) {
      res.status = 429;
      res.set_header("Retry-After", "2");
      res.set_content(shape.rate_limited, "application/json");
    } else {
      res.set_content(shape.answer("Done, no code.", false, FakeUsage()), "application/json");
    }
  });
  Start();
  json status = Run(/*samples=*/1, /*turns=*/1);
  ASSERT_EQ(status["trajectories"]["terminal"], 1);
  EXPECT_EQ(status["trajectories"]["by_state"].value("LIMITS_EXCEEDED", 0), 1) << status.dump();
  EXPECT_EQ(status["turns"]["completed"], 1) << "one recorded answer for the turn";
  const auto seen = server_.Arrivals();
  ASSERT_EQ(seen.size(), 2u);
  const double gap = std::chrono::duration<double>(seen[1] - seen[0]).count();
  EXPECT_GE(gap, 2.0) << "Retry-After: 2 was not honoured";
  EXPECT_EQ(cluster_.QueryInt("SELECT COUNT(*) FROM events WHERE kind = 'task.retry'"), 1);
  EXPECT_EQ(cluster_.QueryInt(absl::StrCat("SELECT SUM(api_failures) FROM tasks WHERE kind = ",
                                           scheduler::SqlValue(scheduler::StepKind::kLlm))),
            1);
}

// A bad key ends every trajectory at its first call; the provider's message
// (which may quote the key) is kept, the key itself is not.
TEST_P(GatewayProviderTest, AuthErrorEndsTheTrajectoryWithoutRetry) {
  AnswerAll(shape_.auth_status, shape_.auth_error);
  Start();
  json status = Run(/*samples=*/2, /*turns=*/3);
  ASSERT_EQ(status["trajectories"]["terminal"], 2);
  EXPECT_EQ(status["trajectories"]["by_state"].value("FAILED", 0), 2) << status.dump();
  EXPECT_EQ(status["trajectories"]["by_failure_class"].value("TERMINAL", 0), 2) << status.dump();
  EXPECT_EQ(server_.RequestCount(), 2u) << "an auth error is never retried";
  for (const json& t : List()["trajectories"]) {
    const std::string reason = t["reason"].get<std::string>();
    EXPECT_NE(reason.find(shape_.auth_said), std::string::npos) << reason;
    if (shape_.auth_status == 401) {
      EXPECT_NE(reason.find("authentication failed"), std::string::npos) << reason;
    }
  }
}

// A prompt over the context window ends the trajectory at once: asking again
// cannot help.
TEST_P(GatewayProviderTest, ContextWindowErrorIsTerminal) {
  AnswerAll(400, shape_.context_error);
  Start();
  json status = Run(/*samples=*/1, /*turns=*/2);
  ASSERT_EQ(status["trajectories"]["terminal"], 1);
  EXPECT_EQ(status["trajectories"]["by_state"].value("FAILED", 0), 1) << status.dump();
  EXPECT_EQ(status["trajectories"]["by_failure_class"].value("TERMINAL", 0), 1) << status.dump();
  EXPECT_EQ(server_.RequestCount(), 1u) << "a context-window error is never retried";
  EXPECT_EQ(status["turns"]["completed"], 0);
  json list = List();
  ASSERT_EQ(list["trajectories"].size(), 1u);
  const std::string reason = list["trajectories"][0]["reason"].get<std::string>();
  EXPECT_NE(reason.find("context window exceeded"), std::string::npos) << reason;
  EXPECT_NE(reason.find(shape_.context_said), std::string::npos) << reason;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GatewayProviderTest,
                         ::testing::Values(OpenAi(), Anthropic(), Gemini()),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return info.param.provider;
                         });

}  // namespace
}  // namespace ptxbench::testing
