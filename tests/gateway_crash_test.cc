// A real gateway killed with SIGKILL while 100 model calls are in flight:
// the scheduler takes the leases back when they expire, a second gateway asks
// the lost calls again, and every turn ends up with exactly one recorded
// answer. The fake provider holds every answer until the first gateway is
// dead, so all 100 calls are provably lost together.
#include <stdlib.h>

#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "agent_gateway/testing/fake_model_server.h"
#include "gtest/gtest.h"
#include "scheduler/store/schema.h"
#include "tests/cluster.h"
#include "tests/gateway_test_util.h"

namespace ptxbench::testing {
namespace {

using agent_gateway::testing_support::Completion;
using agent_gateway::testing_support::FakeModelServer;
using agent_gateway::testing_support::Gate;

constexpr int kCalls = 100;
constexpr char kKeyEnv[] = "PTXB_CRASH_TEST_KEY";

TEST(GatewayCrashTest, LostCallsAreAskedAgainAndAnsweredOnce) {
  setenv(kKeyEnv, "sk-crash-3f9e1d", 1);
  FakeModelServer::Options options;
  options.threads = 2 * kCalls + 32;  // the lost calls' handlers and the second wave
  FakeModelServer server(options);
  auto gate = std::make_shared<Gate>();
  // Lets held handlers go however the test ends, so the server stops at once.
  struct OpenAtExit {
    std::shared_ptr<Gate> gate;
    ~OpenAtExit() { gate->Open(); }
  } open_at_exit{gate};
  // No code block: each one-turn trajectory ends after its answer, no worker.
  server.Answer([gate](const httplib::Request&, httplib::Response& res) {
    gate->Wait(std::chrono::seconds(30));
    res.set_content(Completion("No kernel this time.", "stop"), "application/json");
  });

  Cluster c("gateway_crash");
  ASSERT_TRUE(c.StartScheduler({"--lease-ttl-ms", "3000", "--heartbeat-ms", "1000",
                                "--backoff-base-ms", "200", "--model-inflight-cap", "1000"}))
      << c.SchedulerLogTail();
  const std::string registry =
      WriteRegistry(c, "fake-model", "openai", server.base_url(), kKeyEnv,
                    {{"price", {{"input_per_mtok", 2.0}, {"output_per_mtok", 8.0}}}});
  const std::vector<std::string> gateway_flags = {"--models", registry, "--serve", "fake-model",
                                                  "--slots", "128"};
  process::Process& first = c.AddRealGateway(gateway_flags);
  const std::string exp = SubmitSpec(c, "gateway-crash", "fake-model", kCalls, 1);
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();

  ASSERT_TRUE(server.WaitForInFlight(kCalls, std::chrono::seconds(20)))
      << "only " << server.InFlight() << " calls in flight\n"
      << Tail(c.dir() + "/gateway0.log");
  EXPECT_EQ(server.InFlight(), kCalls) << "more calls than tasks";
  first.Kill();
  // The first wave's answers go to a dead client; everything after it is
  // answered at once.
  gate->Open();
  c.AddRealGateway(gateway_flags);

  nlohmann::json status = c.WaitFinished(exp, 40);
  ASSERT_EQ(status["trajectories"]["terminal"], kCalls)
      << status.dump() << c.SchedulerLogTail() << Tail(c.dir() + "/gateway1.log");
  // One-turn trajectories without code end at their turn limit.
  EXPECT_EQ(status["trajectories"]["by_state"].value("LIMITS_EXCEEDED", 0), kCalls)
      << status.dump();
  EXPECT_EQ(status["turns"]["completed"], kCalls);
  EXPECT_EQ(server.RequestCount(), 2u * kCalls) << "each lost call asked again exactly once";

  // Exactly one recorded answer per (trajectory, turn): one turns row and
  // one turn.answered event each, and every LLM task died exactly once.
  EXPECT_EQ(c.QueryInt("SELECT COUNT(*) FROM turns"), kCalls);
  EXPECT_EQ(c.QueryInt("SELECT COUNT(DISTINCT trajectory) FROM turns WHERE turn = 0"), kCalls);
  EXPECT_EQ(c.QueryInt("SELECT COUNT(*) FROM events WHERE kind = 'turn.answered'"), kCalls);
  EXPECT_EQ(c.QueryInt("SELECT COUNT(*) FROM (SELECT trajectory, turn FROM events "
                       "WHERE kind = 'turn.answered' GROUP BY trajectory, turn "
                       "HAVING COUNT(*) != 1)"),
            0);
  EXPECT_EQ(c.QueryInt(absl::StrCat(
                "SELECT COUNT(*) FROM tasks WHERE kind = ", SqlValue(scheduler::StepKind::kLlm),
                " AND state = ", SqlValue(scheduler::TaskState::kDone), " AND deaths = 1")),
            kCalls)
      << "every LLM task done, after its first executor died";
  EXPECT_EQ(c.QueryInt("SELECT COUNT(*) FROM events WHERE kind = 'task.expired'"), kCalls);
  // The cost counts the answers that were recorded, not the lost calls.
  // Per call: (800·2 + 200·2 + 500·8) / 1e6 = $0.006.
  EXPECT_NEAR(status["cost_usd"].get<double>(), kCalls * 0.006, 1e-9);
}

}  // namespace
}  // namespace ptxbench::testing
