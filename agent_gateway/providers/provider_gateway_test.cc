// The real gateway's task handler with a recording provider: what is
// checked before a call, the turn a call is for, limits queueing, metrics.
#include "agent_gateway/providers/provider_gateway.h"

#include <gtest/gtest.h>

#include <future>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;

// Answers at once with the turn it was asked for, and counts its calls.
class RecordingProvider final : public Provider {
 public:
  explicit RecordingProvider(std::atomic<int>* calls) : calls_(calls) {}
  void Start(ModelCall call, Done done) override {
    ++*calls_;
    CallOutcome out;
    out.response.emplace();
    out.response->set_text("turn " + std::to_string(call.turn));
    out.response->mutable_usage()->set_input_tokens(10);
    out.response->mutable_usage()->set_output_tokens(5);
    out.response->set_cost_usd(0.25);
    out.response->set_finish_reason(call.turn == 1 ? "length" : "stop");
    std::move(done)(std::move(out));
  }

 private:
  std::atomic<int>* calls_;
};

class ProviderGatewayTest : public ::testing::Test {
 protected:
  std::unique_ptr<ProviderGatewayHandler> Make(ModelLimits limits, int64_t context_window) {
    ProviderGatewayHandler::Served served;
    served.config.name = "m";
    served.config.context_window = context_window;
    served.config.params.set_max_tokens(1000);
    served.provider = std::make_unique<RecordingProvider>(&calls_);
    permits_ = std::make_unique<LocalCallPermits>(std::map<std::string, RateLimits>{{"m", limits}},
                                                  Clock::Real());
    return MakeWith(std::move(served), permits_.get());
  }
  std::unique_ptr<ProviderGatewayHandler> MakeWith(ProviderGatewayHandler::Served served,
                                                   CallPermits* permits) {
    std::map<std::string, ProviderGatewayHandler::Served> models;
    models["m"] = std::move(served);
    return std::make_unique<ProviderGatewayHandler>(std::move(models), permits);
  }
  static v1::Task Task(int turn, int64_t input_tokens, const std::string& model = "m") {
    v1::Task t;
    t.set_turn(turn);
    t.set_attempt(1);
    t.mutable_llm()->set_model(model);
    t.mutable_llm()->set_estimated_input_tokens(input_tokens);
    return t;
  }
  // Starts `task` and returns its outcome when it comes.
  std::future<v1::CompleteRequest> Begin(ProviderGatewayHandler& h, const v1::Task& task,
                                         std::shared_ptr<std::atomic<bool>> cancelled = nullptr) {
    auto result = std::make_shared<std::promise<v1::CompleteRequest>>();
    std::future<v1::CompleteRequest> future = result->get_future();
    if (!cancelled) cancelled = std::make_shared<std::atomic<bool>>(false);
    h.Start(task, cancelled, [result](v1::CompleteRequest r) { result->set_value(std::move(r)); });
    return future;
  }
  std::atomic<int> calls_{0};
  std::unique_ptr<LocalCallPermits> permits_;
};

// Permits that are never granted (a scheduler out of reach), or refused for
// good.
class ClosedPermits final : public CallPermits {
 public:
  explicit ClosedPermits(absl::Status refusal) : refusal_(std::move(refusal)) {}
  absl::StatusOr<Grant> TryAcquire(const std::string&, int64_t) override {
    ++asks;
    if (!refusal_.ok()) return refusal_;
    Grant g;
    g.wait = absl::Milliseconds(50);
    return g;
  }
  void Release(const std::string&, const Permit&, int64_t) override { ++releases; }
  std::atomic<int> asks{0};
  std::atomic<int> releases{0};

 private:
  absl::Status refusal_;
};

TEST_F(ProviderGatewayTest, NoPermitNoCall) {
  ClosedPermits closed(absl::OkStatus());
  ProviderGatewayHandler::Served served;
  served.config.name = "m";
  served.provider = std::make_unique<RecordingProvider>(&calls_);
  auto h = MakeWith(std::move(served), &closed);
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  std::future<v1::CompleteRequest> r = Begin(*h, Task(0, 100), cancelled);
  EXPECT_EQ(r.wait_for(std::chrono::milliseconds(600)), std::future_status::timeout);
  EXPECT_GE(closed.asks.load(), 3) << "asks again as told";
  EXPECT_EQ(calls_.load(), 0);
  cancelled->store(true);
  EXPECT_EQ(r.get().failure().failure_class(), v1::INFRA);
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ProviderGatewayTest, APermitRefusedForGoodFailsTheStep) {
  ClosedPermits closed(absl::InvalidArgumentError("model name too long"));
  ProviderGatewayHandler::Served served;
  served.config.name = "m";
  served.provider = std::make_unique<RecordingProvider>(&calls_);
  auto h = MakeWith(std::move(served), &closed);
  v1::CompleteRequest r = Begin(*h, Task(0, 100)).get();
  EXPECT_EQ(r.failure().failure_class(), v1::INFRA);
  EXPECT_NE(r.failure().message().find("model name too long"), std::string::npos)
      << r.DebugString();
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ProviderGatewayTest, TheProviderIsAskedForTheTasksTurn) {
  auto h = Make({}, 0);
  EXPECT_EQ(Begin(*h, Task(3, 100)).get().llm().text(), "turn 3");
  EXPECT_EQ(Begin(*h, Task(0, 100)).get().llm().text(), "turn 0");
}

TEST_F(ProviderGatewayTest, OverLongContextIsRefusedBeforeAnyCall) {
  auto h = Make({}, /*context_window=*/8000);
  // 7000 estimated + max_tokens 1000 fits exactly; one more token does not.
  EXPECT_TRUE(Begin(*h, Task(0, 7000)).get().has_llm());
  v1::CompleteRequest refused = Begin(*h, Task(1, 7001)).get();
  EXPECT_EQ(calls_.load(), 1);
  EXPECT_EQ(refused.failure().failure_class(), v1::TERMINAL);
  EXPECT_NE(refused.failure().message().find("context window exceeded"), std::string::npos)
      << refused.failure().message();
  EXPECT_EQ(h->metrics().Snapshot()["m"].refused_early, 1);
}

TEST_F(ProviderGatewayTest, UnknownModelIsTerminal) {
  auto h = Make({}, 0);
  v1::CompleteRequest r = Begin(*h, Task(0, 1, "other")).get();
  EXPECT_EQ(r.failure().failure_class(), v1::TERMINAL);
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ProviderGatewayTest, CallsBeyondTheRpmWaitAndCanBeCancelledWhileWaiting) {
  auto h = Make({/*rpm=*/2, 0, 0}, 0);
  EXPECT_TRUE(Begin(*h, Task(0, 1)).get().has_llm());
  EXPECT_TRUE(Begin(*h, Task(0, 1)).get().has_llm());
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  std::future<v1::CompleteRequest> third = Begin(*h, Task(0, 1), cancelled);
  EXPECT_EQ(third.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "a third call inside the minute must wait";
  EXPECT_EQ(h->metrics().Snapshot()["m"].waiting, 1);
  *cancelled = true;
  ASSERT_EQ(third.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  EXPECT_EQ(third.get().failure().failure_class(), v1::INFRA);
  EXPECT_EQ(calls_.load(), 2);
  EXPECT_EQ(h->metrics().Snapshot()["m"].waiting, 0);
}

TEST_F(ProviderGatewayTest, MetricsAddUpTokensCostAndTruncation) {
  auto h = Make({}, 0);
  for (int turn = 0; turn < 3; ++turn) ASSERT_TRUE(Begin(*h, Task(turn, 1)).get().has_llm());
  ModelCounters c = h->metrics().Snapshot()["m"];
  EXPECT_EQ(c.answered, 3);
  EXPECT_EQ(c.truncated, 1);
  EXPECT_EQ(c.input_tokens, 30);
  EXPECT_EQ(c.output_tokens, 15);
  EXPECT_DOUBLE_EQ(c.cost_usd, 0.75);
  EXPECT_EQ(c.in_flight, 0);
  const std::string text = h->metrics().Prometheus();
  EXPECT_NE(text.find("ptxbench_gateway_answers_total{model=\"m\"} 3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("ptxbench_gateway_cost_usd_total{model=\"m\"} 0.75\n"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::agent_gateway
