// One rate limit per model across the fleet (docs/ARCHITECTURE.md, "One
// rate limit per model"), seen from the provider. Four real gateways serve
// one model whose registry entry says rpm 40: together they let 40 requests
// a minute reach the fake provider (at least 95% of it, never more in any
// 60-second window), where each gateway keeping its own limit let 160
// through at once. And a gateway killed while it holds a model's whole
// concurrency gives its share back: the other gateway's calls wait while it
// lives and go out within a permit's TTL after it died.
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent_gateway/testing/fake_model_server.h"
#include "gtest/gtest.h"
#include "tests/cluster.h"
#include "tests/gateway_test_util.h"

namespace ptxbench::testing {
namespace {

using agent_gateway::testing_support::Completion;
using agent_gateway::testing_support::FakeModelServer;
using agent_gateway::testing_support::Gate;
using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

constexpr char kKeyEnv[] = "PTXB_FLEET_TEST_KEY";
constexpr int kGateways = 4;
constexpr int kRpm = 40;
// The scheduler times a window when it grants a permit; the request reaches
// the server a little later, and not always equally later (as in
// gateway_rpm_test).
constexpr double kSlackS = 1.0;

// The first kRpm + 1 arrivals within one 60 s window (less the slack), as a
// message; "" if none.
std::string FirstViolation(const std::vector<Clock::time_point>& arrivals) {
  for (size_t i = 0; i + kRpm < arrivals.size(); ++i) {
    const double apart = Seconds(arrivals[i + kRpm] - arrivals[i]).count();
    if (apart < 60.0 - kSlackS) {
      return absl::StrCat("requests ", i, " and ", i + kRpm, " arrived ", apart, " s apart: ",
                          kRpm + 1, " requests in one 60 s window with rpm ", kRpm, " for the fleet");
    }
  }
  return "";
}

bool WaitForExecutors(const Cluster& c, int n) {
  for (int i = 0; i < 200; ++i) {
    if (c.QueryInt("SELECT COUNT(*) FROM executors") >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(FleetLimitsTest, FourGatewaysTogetherKeepTheModelsRpm) {
  setenv(kKeyEnv, "sk-fleet-5b21c0", 1);
  FakeModelServer::Options options;
  options.keep_requests = false;
  // A pool thread per connection the gateways keep open (a kept-alive
  // connection holds its thread): fewer would hold requests back, and the
  // server would count them late.
  options.threads = 256;
  FakeModelServer server(options);
  server.Answer([](const httplib::Request&, httplib::Response& res) {
    res.set_content(Completion("No kernel this time.", "stop"), "application/json");
  });
  Cluster c("fleet_rpm");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  const std::string registry = WriteRegistry(c, "fake-model", "openai", server.base_url(), kKeyEnv,
                                             {{"limits", {{"rpm", kRpm}}}});
  for (int i = 0; i < kGateways; ++i) {
    c.AddRealGateway({"--models", registry, "--serve", "fake-model", "--slots", "16"});
  }
  ASSERT_TRUE(WaitForExecutors(c, kGateways)) << c.SchedulerLogTail();
  // More than two minutes' worth: every window is contended.
  const int calls = 3 * kRpm + 20;
  const std::string exp = SubmitSpec(c, "fleet-rpm", "fake-model", calls, 1);
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();

  // Two whole windows from the first arrival, or until a violation.
  const Clock::time_point start = Clock::now();
  std::string violation;
  for (;;) {
    const std::vector<Clock::time_point> arrivals = server.Arrivals();
    violation = FirstViolation(arrivals);
    if (!violation.empty()) break;
    if (!arrivals.empty() && Clock::now() > arrivals.front() + std::chrono::seconds(121)) break;
    ASSERT_LT(Clock::now() - start, std::chrono::seconds(150))
        << arrivals.size() << " arrivals\n" << c.SchedulerLogTail();
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  const std::vector<Clock::time_point> arrivals = server.Arrivals();
  ASSERT_FALSE(arrivals.empty());
  std::string times;
  for (const auto& t : arrivals) absl::StrAppend(&times, " ", Seconds(t - arrivals.front()).count());
  std::printf("arrivals (s after the first):%s\n", times.c_str());
  ASSERT_EQ(violation, "") << "arrivals:" << times;

  // Each whole minute holds at least 95% of the limit, and no more than it.
  // The minutes start the slack before the first arrival: the permits of
  // one minute are granted at once, and their requests arrive within a
  // few milliseconds of each other, a little before or after the minute.
  for (int minute = 0; minute < 2; ++minute) {
    const auto from = arrivals.front() + std::chrono::seconds(60 * minute) -
                      std::chrono::milliseconds(static_cast<int>(kSlackS * 1000));
    const auto to = from + std::chrono::seconds(60);
    const long n = std::count_if(arrivals.begin(), arrivals.end(),
                                 [&](const auto& t) { return t >= from && t < to; });
    std::printf("minute %d: %ld requests (rpm %d)\n", minute, n, kRpm);
    EXPECT_GE(n, kRpm * 95 / 100) << "minute " << minute << ":" << times;
    EXPECT_LE(n, kRpm) << "minute " << minute << ":" << times;
  }
  // Every gateway asked: the limit was shared, not one gateway's alone.
  EXPECT_EQ(c.QueryInt("SELECT COUNT(*) FROM executors"), kGateways);
}

TEST(FleetLimitsTest, AKilledGatewaysConcurrencyShareComesBack) {
  setenv(kKeyEnv, "sk-fleet-5b21c0", 1);
  constexpr int kConcurrency = 4;
  FakeModelServer server;
  // The first gateway's calls are held until it is dead; the rest are
  // held too, so the calls in flight can be counted.
  auto first_wave = std::make_shared<Gate>();
  auto second_wave = std::make_shared<Gate>();
  struct OpenAtExit {
    std::shared_ptr<Gate> a, b;
    ~OpenAtExit() {
      a->Open();
      b->Open();
    }
  } open_at_exit{first_wave, second_wave};
  auto seen = std::make_shared<std::atomic<int>>(0);
  server.Answer([=](const httplib::Request&, httplib::Response& res) {
    (++*seen <= kConcurrency ? first_wave : second_wave)->Wait(std::chrono::seconds(60));
    res.set_content(Completion("No kernel this time.", "stop"), "application/json");
  });
  Cluster c("fleet_concurrency");
  constexpr int kTtlMs = 3000;
  ASSERT_TRUE(c.StartScheduler({"--lease-ttl-ms", std::to_string(kTtlMs), "--heartbeat-ms",
                                "1000", "--backoff-base-ms", "200"}))
      << c.SchedulerLogTail();
  const std::string registry = WriteRegistry(c, "fake-model", "openai", server.base_url(), kKeyEnv,
                                             {{"limits", {{"concurrency", kConcurrency}}}});
  const std::vector<std::string> flags = {"--models", registry, "--serve", "fake-model",
                                          "--slots", "8"};
  process::Process& first = c.AddRealGateway(flags);
  const std::string exp = SubmitSpec(c, "fleet-concurrency", "fake-model", 4 * kConcurrency, 1);
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  ASSERT_TRUE(server.WaitForInFlight(kConcurrency, std::chrono::seconds(20)))
      << server.InFlight() << " in flight\n" << Tail(c.dir() + "/gateway0.log");

  // A second gateway leases the other steps but may not call while the
  // first holds the model's whole concurrency.
  c.AddRealGateway(flags);
  ASSERT_TRUE(WaitForExecutors(c, 2));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(seen->load(), kConcurrency) << "the second gateway called past the fleet's limit\n"
                                        << Tail(c.dir() + "/gateway1.log");
  EXPECT_EQ(server.PeakInFlight(), kConcurrency);

  const Clock::time_point killed = Clock::now();
  first.Kill();
  first_wave->Open();  // the dead gateway's calls end at the server
  // Its permits expire a TTL after their last renewal; the second gateway's
  // calls then take the slots (and the dead one's steps, once their leases
  // expire).
  bool back = false;
  while (Clock::now() - killed < std::chrono::seconds(20)) {
    if (seen->load() >= 2 * kConcurrency) {
      back = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double after = Seconds(Clock::now() - killed).count();
  std::printf("the share came back %.2f s after the kill (permit TTL %d ms)\n", after, kTtlMs);
  ASSERT_TRUE(back) << seen->load() << " requests\n"
                    << c.SchedulerLogTail() << Tail(c.dir() + "/gateway1.log");
  // Within the TTL, a sweep and the gateway's polls; not before the first
  // gateway's renewals could have lapsed.
  EXPECT_LT(after, kTtlMs / 1000.0 + 3.0);
  // Never more than the limit at the server (the first wave's handlers
  // ended before the second wave came).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(server.InFlight(), kConcurrency);
  EXPECT_EQ(server.PeakInFlight(), kConcurrency);
  second_wave->Open();
  const nlohmann::json status = c.WaitFinished(exp, 60);
  EXPECT_EQ(status["trajectories"]["terminal"], 4 * kConcurrency) << status.dump();
}

}  // namespace
}  // namespace ptxbench::testing
