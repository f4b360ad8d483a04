// A real gateway (ptxbench-gateway without --simulate) against a fake
// OpenAI-compatible server on loopback, with a scheduler and a compile-only
// worker: multi-turn trajectories whose kernels are compiled complete with
// the model's answers and cost, retries wait as long as they should, and
// the API key appears nowhere in the database or the logs. The wire formats
// of the three providers (errors, usage sums, truncation) are covered by
// gateway_providers_test, which needs no worker.
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "agent_gateway/testing/fake_model_server.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "gtest/gtest.h"
#include "tests/cluster.h"

namespace ptxbench::testing {
namespace {

using agent_gateway::testing_support::Completion;
using agent_gateway::testing_support::FakeModelServer;

constexpr char kKey[] = "sk-e2e-7d1c3b9a05f2";

class GatewayEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) {
      GTEST_SKIP() << "nvcc not found: the compile-only worker cannot run here";
    }
    setenv("PTXB_FAKE_OPENAI_KEY", kKey, 1);
  }

  // Scheduler, compile-only worker, and a gateway serving "fake-model".
  void Start(Cluster& c) {
    ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
    const std::string registry = c.WriteFile("models.json", R"({"models": {"fake-model": {
      "provider": "openai", "base_url": ")" + server_.base_url() + R"(",
      "model_id": "served-model-1", "api_key_env": "PTXB_FAKE_OPENAI_KEY",
      "price": {"input_per_mtok": 2.0, "output_per_mtok": 8.0, "cached_input_per_mtok": 0.5}}}})");
    c.AddRealWorker({"--slots", "2"});
    c.AddRealGateway({"--models", registry, "--serve", "fake-model", "--slots", "4"});
  }

  std::string Submit(Cluster& c, int turns, int samples = 2) {
    return c.Submit(c.WriteFile(
        "spec.json", R"({"name": "real-gateway", "models": ["fake-model"],
      "definitions": ["gemm_n7168_k5120"], "prompt_tags": ["ptxb-no-hint"], "samples": )" +
                         std::to_string(samples) + R"(, "num_turns": )" + std::to_string(turns) +
                         R"(, "target_speedup": 1.0, "eval": "compile-only"})"));
  }

  FakeModelServer server_;
};

TEST_F(GatewayEndToEndTest, MultiTurnTrajectoriesCompleteWithUsageAndCost) {
  const std::string kernel = ReadFile(DataDir() + "/worker/testdata/gemm/correct.cu").value_or("");
  server_.Answer([&](const httplib::Request&, httplib::Response& res) {
    res.set_content(Completion("Here it is.\n```cuda\n" + kernel + "```\n", "stop"),
                    "application/json");
  });
  Cluster c("e2e_real_gateway");
  Start(c);
  const std::string exp = Submit(c, 2);
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  nlohmann::json status = c.WaitFinished(exp, 120);
  ASSERT_EQ(status["trajectories"]["terminal"], 2) << status.dump() << Tail(c.dir() + "/gateway1.log");
  EXPECT_EQ(status["turns"]["completed"], 4);
  EXPECT_EQ(server_.Requests().size(), 4u) << "one model call per turn";
  // Turn 1 carried turn 0's answer and feedback (full context).
  nlohmann::json second;
  for (const auto& r : server_.Requests()) {
    nlohmann::json body = nlohmann::json::parse(r.body);
    if (body["messages"].size() == 4) second = body;
    EXPECT_EQ(body["model"], "served-model-1");
  }
  ASSERT_FALSE(second.is_null()) << "no request held the earlier turn";
  EXPECT_EQ(second["messages"][2]["role"], "assistant");
  // Cost per call: (800·2 + 200·0.5 + 500·8) / 1e6 = $0.0057; 4 calls.
  EXPECT_NEAR(status["cost_usd"].get<double>(), 4 * 0.0057, 1e-9);
  EXPECT_FALSE(status["simulated"].get<bool>()) << "real gateway answers are not simulated";
  CommandResult models = c.Cli({"models"});
  EXPECT_EQ(models.exit_code, 0);
  EXPECT_NE(models.out.find("fake-model  (1 gateway"), std::string::npos) << models.out;

  // The key is nowhere: database, its WAL, logs.
  for (const auto& entry : std::filesystem::directory_iterator(c.dir())) {
    if (!entry.is_regular_file()) continue;
    EXPECT_EQ(ReadFile(entry.path()).value_or("").find(kKey), std::string::npos) << entry.path();
  }
}

// A 429 with Retry-After: 2 is asked again no sooner than 2 s later, a 500
// after the scheduler's backoff, and the turn then gets exactly one answer.
TEST_F(GatewayEndToEndTest, RateLimitAndServerErrorAreRetriedWithTheirDelays) {
  // The server's pool threads record arrivals; the test reads them.
  struct Arrivals {
    absl::Mutex mu;
    std::vector<std::chrono::steady_clock::time_point> seen ABSL_GUARDED_BY(mu);
  } arrivals;
  server_.Answer([&](const httplib::Request&, httplib::Response& res) {
    size_t n;
    {
      absl::MutexLock lock(&arrivals.mu);
      arrivals.seen.push_back(std::chrono::steady_clock::now());
      n = arrivals.seen.size();
    }
    if (n == 1) {
      res.status = 429;
      res.set_header("Retry-After", "2");
      res.set_content(R"({"error": {"message": "slow down"}})", "application/json");
    } else if (n == 2) {
      res.status = 500;
      res.set_content("oops", "text/plain");
    } else {
      res.set_content(Completion("no code this time", "stop"), "application/json");
    }
  });
  Cluster c("e2e_real_gateway_retry");
  Start(c);
  const std::string exp = Submit(c, 1, 1);
  ASSERT_FALSE(exp.empty());
  nlohmann::json status = c.WaitFinished(exp, 60);
  ASSERT_EQ(status["trajectories"]["terminal"], 1) << status.dump();
  std::vector<std::chrono::steady_clock::time_point> seen;
  {
    absl::MutexLock lock(&arrivals.mu);
    seen = arrivals.seen;
  }
  ASSERT_EQ(seen.size(), 3u);
  const double after_429 = std::chrono::duration<double>(seen[1] - seen[0]).count();
  const double after_500 = std::chrono::duration<double>(seen[2] - seen[1]).count();
  std::cout << "retry after 429: " << after_429 << " s, after 500: " << after_500 << " s\n";
  EXPECT_GE(after_429, 2.0) << "Retry-After: 2 was not honoured";
  EXPECT_GE(after_500, 1.0) << "no backoff after a 500";
  EXPECT_EQ(status["turns"]["completed"], 1) << "one recorded answer for the turn";
  // The handler refers to this test's locals: none of them may outlive it.
  server_.Answer([](const httplib::Request&, httplib::Response& res) { res.status = 503; });
}

}  // namespace
}  // namespace ptxbench::testing
