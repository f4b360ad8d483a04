// Stopping executors without losing or repeating work: SIGTERM drains a
// gateway or a worker (no new lease; what it holds finishes and is reported),
// a second signal or the end of --stop-grace-s hands the held tasks back.
// The fake provider answers slowly, holding every answer until the test
// lets it go, so the calls in flight at the signal are known exactly.
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent_gateway/testing/fake_model_server.h"
#include "common/file.h"
#include "gtest/gtest.h"
#include "scheduler/store/schema.h"
#include "tests/cluster.h"
#include "tests/gateway_test_util.h"

namespace ptxbench::testing {
namespace {

using agent_gateway::testing_support::Completion;
using agent_gateway::testing_support::FakeModelServer;
using agent_gateway::testing_support::Gate;
using scheduler::SqlValue;
using scheduler::StepKind;
using scheduler::TaskState;

constexpr char kKeyEnv[] = "PTXB_STOP_TEST_KEY";
// A long TTL: a task that came back must have been handed back, not expired.
const std::vector<std::string> kSchedulerFlags = {
    "--lease-ttl-ms", "120000", "--heartbeat-ms", "1000", "--backoff-base-ms", "100"};

// The exit status of `p` once it ends within `limit`; nullopt if it does not.
std::optional<process::ExitStatus> WaitExit(process::Process& p, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::optional<process::ExitStatus> s = p.TryWait()) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

std::string TaskCount(StepKind kind, TaskState state) {
  return absl::StrCat("SELECT COUNT(*) FROM tasks WHERE kind = ", SqlValue(kind),
                      " AND state = ", SqlValue(state));
}

// Polls `done` until it holds or `limit` passes; whether it held.
bool WaitUntil(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Waits until `n` tasks of `kind` are leased.
bool WaitLeased(const Cluster& c, StepKind kind, int n, std::chrono::seconds limit) {
  return WaitUntil([&] { return c.QueryInt(TaskCount(kind, TaskState::kLeased)) == n; }, limit);
}

// A fake provider whose answers wait for `gate`, then take `delay` more.
class SlowProvider {
 public:
  explicit SlowProvider(std::chrono::milliseconds delay) : gate_(std::make_shared<Gate>()) {
    FakeModelServer::Options options;
    options.threads = 128;
    server_ = std::make_unique<FakeModelServer>(options);
    // No code block: each one-turn trajectory ends after its answer.
    server_->Answer([gate = gate_, delay](const httplib::Request&, httplib::Response& res) {
      gate->Wait(std::chrono::seconds(60));
      std::this_thread::sleep_for(delay);
      res.set_content(Completion("No kernel this time.", "stop"), "application/json");
    });
  }
  // Lets held handlers go however the test ends, so the server stops at once.
  ~SlowProvider() { gate_->Open(); }
  FakeModelServer& server() { return *server_; }
  void Open() { gate_->Open(); }

 private:
  std::shared_ptr<Gate> gate_;
  std::unique_ptr<FakeModelServer> server_;
};

class ExecutorStopTest : public ::testing::Test {
 protected:
  void StartGatewayCluster(const std::string& name, const std::vector<std::string>& extra = {}) {
    setenv(kKeyEnv, "sk-stop-61c2a0", 1);
    cluster_ = std::make_unique<Cluster>(name);
    scheduler_flags_ = kSchedulerFlags;
    scheduler_flags_.insert(scheduler_flags_.end(), extra.begin(), extra.end());
    ASSERT_TRUE(cluster_->StartScheduler(scheduler_flags_)) << cluster_->SchedulerLogTail();
    registry_ = WriteRegistry(*cluster_, "fake-model", "openai", provider_.server().base_url(),
                              kKeyEnv);
  }
  process::Process& AddGateway(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> flags = {"--models", registry_, "--serve", "fake-model",
                                      "--slots", "20"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    return cluster_->AddRealGateway(flags);
  }
  std::string Logs() const {
    return cluster_->SchedulerLogTail() + Tail(cluster_->dir() + "/gateway0.log") +
           Tail(cluster_->dir() + "/gateway1.log");
  }
  // Every trajectory of `exp` (one turn each) ended with exactly one
  // recorded answer.
  void ExpectAnsweredOnce(const std::string& exp, int trajectories) {
    nlohmann::json status = cluster_->WaitFinished(exp, 60);
    ASSERT_EQ(status["trajectories"]["terminal"], trajectories) << status.dump() << Logs();
    EXPECT_EQ(cluster_->QueryInt("SELECT COUNT(*) FROM turns"), trajectories);
    EXPECT_EQ(cluster_->QueryInt("SELECT COUNT(*) FROM (SELECT trajectory, turn FROM events "
                                 "WHERE kind = 'turn.answered' GROUP BY trajectory, turn "
                                 "HAVING COUNT(*) != 1)"),
              0);
    EXPECT_EQ(cluster_->QueryInt("SELECT COUNT(*) FROM events WHERE kind = 'turn.answered'"),
              trajectories);
    EXPECT_EQ(cluster_->QueryInt("SELECT COUNT(*) FROM events WHERE kind = 'task.expired'"), 0)
        << "nothing waited for its lease to expire";
  }

  SlowProvider provider_{std::chrono::milliseconds(300)};
  std::unique_ptr<Cluster> cluster_;
  std::vector<std::string> scheduler_flags_;
  std::string registry_;
};

// The acceptance case: a gateway with 20 slow calls in flight gets SIGTERM
// while 10 more wait; a second gateway starts. The first finishes and reports
// its 20 and exits 0 without leasing again; the second answers the other 10;
// the provider is asked each question once.
TEST_F(ExecutorStopTest, SigtermLetsAGatewaysCallsFinishAndNoneIsAskedTwice) {
  constexpr int kCalls = 30, kFirst = 20;
  StartGatewayCluster("stop_gateway_drain");
  process::Process& first = AddGateway();
  const std::string exp = SubmitSpec(*cluster_, "stop-drain", "fake-model", kCalls, 1);
  ASSERT_FALSE(exp.empty()) << Logs();
  ASSERT_TRUE(provider_.server().WaitForInFlight(kFirst, std::chrono::seconds(20))) << Logs();

  first.Signal(SIGTERM);
  AddGateway();
  // The second gateway takes the 10 waiting calls; the first takes none.
  ASSERT_TRUE(provider_.server().WaitForInFlight(kCalls, std::chrono::seconds(20))) << Logs();
  EXPECT_EQ(provider_.server().InFlight(), kCalls) << "more calls than tasks";
  provider_.Open();

  std::optional<process::ExitStatus> exit = WaitExit(first, std::chrono::seconds(30));
  ASSERT_TRUE(exit.has_value()) << "the drained gateway did not exit\n" << Logs();
  EXPECT_TRUE(exit->ok()) << exit->Describe() << Logs();
  ExpectAnsweredOnce(exp, kCalls);
  EXPECT_EQ(provider_.server().RequestCount(), static_cast<size_t>(kCalls))
      << "a question was asked twice";
  EXPECT_EQ(cluster_->QueryInt(absl::StrCat(TaskCount(StepKind::kLlm, TaskState::kDone),
                                            " AND deaths = 0 AND infra_failures = 0")),
            kCalls)
      << "every call done at its first attempt";
  EXPECT_EQ(cluster_->QueryInt("SELECT COUNT(*) FROM events WHERE kind = 'task.leased'"), kCalls);
}

// A Slurm job's scancel signals the scheduler and its executors at once.
// With --report-grace-s the scheduler grants nothing more but takes the reports
// of the calls in flight, and stops once none is held; restarted, it has a
// new gateway answer the rest, and no question was asked twice.
TEST_F(ExecutorStopTest, ASchedulerStoppedWithItsGatewayTakesItsReportsFirst) {
  constexpr int kCalls = 30, kFirst = 20;
  StartGatewayCluster("stop_scheduler_with_gateway", {"--report-grace-s", "60"});
  process::Process& first = AddGateway();
  const std::string exp = SubmitSpec(*cluster_, "stop-both", "fake-model", kCalls, 1);
  ASSERT_FALSE(exp.empty()) << Logs();
  ASSERT_TRUE(provider_.server().WaitForInFlight(kFirst, std::chrono::seconds(20))) << Logs();

  cluster_->scheduler().Signal(SIGTERM);
  first.Signal(SIGTERM);
  provider_.Open();
  std::optional<process::ExitStatus> gateway = WaitExit(first, std::chrono::seconds(30));
  ASSERT_TRUE(gateway.has_value()) << "the drained gateway did not exit\n" << Logs();
  EXPECT_TRUE(gateway->ok()) << gateway->Describe() << Logs();
  std::optional<process::ExitStatus> scheduler =
      WaitExit(cluster_->scheduler(), std::chrono::seconds(30));
  ASSERT_TRUE(scheduler.has_value()) << "the scheduler did not stop\n" << Logs();
  EXPECT_TRUE(scheduler->ok()) << scheduler->Describe() << Logs();
  const std::string log = cluster_->SchedulerLogTail();
  EXPECT_NE(log.find("msg=\"waiting for the reports of leases held\" held=20"), std::string::npos)
      << log;
  EXPECT_NE(log.find("msg=\"no lease held\""), std::string::npos) << log;
  EXPECT_EQ(provider_.server().RequestCount(), static_cast<size_t>(kFirst))
      << "no lease granted after the signal";

  ASSERT_TRUE(cluster_->StartScheduler(scheduler_flags_)) << cluster_->SchedulerLogTail();
  EXPECT_EQ(cluster_->QueryInt(TaskCount(StepKind::kLlm, TaskState::kDone)), kFirst)
      << "the answers finished in the drain were reported before the scheduler stopped";
  AddGateway();
  ExpectAnsweredOnce(exp, kCalls);
  EXPECT_EQ(provider_.server().RequestCount(), static_cast<size_t>(kCalls))
      << "a question was asked twice";
}

// A second signal, or the end of the grace period, hands the calls in flight
// back at once: the scheduler re-queues them (no lease expiry: the TTL is two
// minutes) and the next gateway answers them.
class HandBackTest : public ExecutorStopTest, public ::testing::WithParamInterface<bool> {};

TEST_P(HandBackTest, HeldCallsAreHandedBackAndAnsweredByTheNextGateway) {
  const bool second_signal = GetParam();
  constexpr int kCalls = 20;
  StartGatewayCluster(second_signal ? "stop_gateway_second_signal" : "stop_gateway_grace");
  process::Process& first =
      AddGateway(second_signal ? std::vector<std::string>{}
                               : std::vector<std::string>{"--stop-grace-s", "1"});
  const std::string exp = SubmitSpec(*cluster_, "stop-hand-back", "fake-model", kCalls, 1);
  ASSERT_FALSE(exp.empty()) << Logs();
  ASSERT_TRUE(provider_.server().WaitForInFlight(kCalls, std::chrono::seconds(20))) << Logs();

  first.Signal(SIGTERM);
  if (second_signal) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    first.Signal(SIGTERM);
  }
  std::optional<process::ExitStatus> exit = WaitExit(first, std::chrono::seconds(15));
  ASSERT_TRUE(exit.has_value()) << "the gateway did not hand back and exit\n" << Logs();
  EXPECT_TRUE(exit->ok()) << exit->Describe() << Logs();
  EXPECT_EQ(cluster_->QueryInt(TaskCount(StepKind::kLlm, TaskState::kLeased)), 0)
      << "every held call was handed back";

  // The first answers go to a gateway that is gone.
  provider_.Open();
  AddGateway();
  ExpectAnsweredOnce(exp, kCalls);
  EXPECT_EQ(provider_.server().RequestCount(), 2u * kCalls)
      << "each handed-back call asked again exactly once";
}

INSTANTIATE_TEST_SUITE_P(SecondSignalOrGraceOver, HandBackTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "SecondSignal" : "GraceOver";
                         });

// How many tasks the executor whose log is `log` received.
int LeasesReceived(const std::string& log) {
  std::vector<std::string> pieces = absl::StrSplit(ReadFile(log).value_or(""), "msg=leased ");
  return static_cast<int>(pieces.size()) - 1;
}

// How many leases its goodbye handed back: the "left" line's released=N (the
// line is logged only when N > 0).
int LeasesHandedBack(const std::string& log) {
  const std::string text = ReadFile(log).value_or("");
  const size_t left = text.find("msg=\"left;");
  if (left == std::string::npos) return 0;
  const size_t at = text.find(" released=", left);
  return at == std::string::npos ? -1 : std::atoi(text.c_str() + at + 10);
}

// A worker evaluating 4 kernels gets SIGTERM with 4 more queued: it finishes
// and reports those it holds, leases nothing more and exits 0; another worker
// evaluates the rest. The 4 are leased in the database when the signal comes,
// but the answers to its polls (one per slot) may still be on the way: the
// signal cancels those polls, and the worker's goodbye (Leave) hands their
// leases back at once. (Under load, three of four answers were once still
// on the way.) The signal comes once the worker holds at least one.
TEST(WorkerStopTest, SigtermFinishesHeldEvaluations) {
  constexpr int kTrajectories = 8, kSlots = 4;
  Cluster c("stop_worker_drain");
  ASSERT_TRUE(c.StartScheduler(kSchedulerFlags)) << c.SchedulerLogTail();
  c.AddGateway({"--latency-ms", "1"});
  process::Process& first =
      c.AddWorker({"--slots", absl::StrCat(kSlots), "--latency-ms", "3000"});
  const std::string exp = SubmitSpec(c, "stop-worker", "sim-model", kTrajectories, 1);
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  ASSERT_TRUE(WaitLeased(c, StepKind::kEval, kSlots, std::chrono::seconds(20)))
      << c.SchedulerLogTail();
  // The rows read leased before their answers leave the scheduler (they go
  // out once the WAL is synced): wait until the worker holds one.
  WaitUntil([&] { return LeasesReceived(c.dir() + "/worker1.log") >= 1; },
            std::chrono::seconds(20));

  first.Signal(SIGTERM);
  std::optional<process::ExitStatus> exit = WaitExit(first, std::chrono::seconds(20));
  ASSERT_TRUE(exit.has_value()) << "the drained worker did not exit\n" << Tail(c.dir() + "/worker1.log");
  EXPECT_TRUE(exit->ok()) << exit->Describe() << Tail(c.dir() + "/worker1.log");
  const int received = LeasesReceived(c.dir() + "/worker1.log");
  EXPECT_GE(received, 1);
  EXPECT_EQ(received + LeasesHandedBack(c.dir() + "/worker1.log"), kSlots)
      << "each lease was either received or handed back";
  EXPECT_EQ(c.QueryInt(TaskCount(StepKind::kEval, TaskState::kDone)), received)
      << "the held evaluations were finished and reported";
  EXPECT_EQ(c.QueryInt(TaskCount(StepKind::kEval, TaskState::kLeased)), 0)
      << "nothing stays leased to a worker that left";
  EXPECT_EQ(c.QueryInt(TaskCount(StepKind::kEval, TaskState::kQueued)),
            kTrajectories - received)
      << "no new lease after the signal";

  c.AddWorker({"--slots", absl::StrCat(kSlots), "--latency-ms", "10"});
  nlohmann::json status = c.WaitFinished(exp, 60);
  ASSERT_EQ(status["trajectories"]["terminal"], kTrajectories) << status.dump();
  EXPECT_EQ(c.QueryInt(absl::StrCat(TaskCount(StepKind::kEval, TaskState::kDone),
                                    " AND deaths = 0 AND infra_failures = 0")),
            kTrajectories)
      << "every evaluation done once, at its first attempt";
}

}  // namespace
}  // namespace ptxbench::testing
