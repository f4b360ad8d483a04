// A model's requests-per-minute limit, seen from the provider: a real
// gateway serving a model with limits.rpm = 2 never lets more than 2 requests
// reach the fake server within any 60-second window, and still finishes all
// the work. Takes about a minute by nature (the window is a minute long);
// a violation ends the test as soon as the fake server sees it.
#include <stdlib.h>

#include <chrono>
#include <cstdio>
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
using Seconds = std::chrono::duration<double>;

constexpr int kRpm = 2;
constexpr int kCalls = 2 * kRpm;  // two windows' worth
// The gateway times its window when a call starts; the request reaches the
// server a little later, and not always equally later. Allowing a second for
// that still catches a limiter that lets a request through early (a token
// bucket of capacity rpm lets the third one through at 30 s).
constexpr double kSlackS = 1.0;

// The first pair of arrivals closer than the window allows (kRpm + 1
// requests within 60 s minus the slack), as a message; "" if none.
std::string FirstViolation(const std::vector<FakeModelServer::TimePoint>& arrivals) {
  for (size_t i = 0; i + kRpm < arrivals.size(); ++i) {
    const double apart = Seconds(arrivals[i + kRpm] - arrivals[i]).count();
    if (apart < 60.0 - kSlackS) {
      return "requests " + std::to_string(i) + " and " + std::to_string(i + kRpm) + " arrived " +
             std::to_string(apart) + " s apart: " + std::to_string(kRpm + 1) +
             " requests in one 60 s window with rpm " + std::to_string(kRpm);
    }
  }
  return "";
}

TEST(GatewayRpmTest, NoSixtySecondWindowHoldsMoreThanRpmRequests) {
  setenv("PTXB_RPM_TEST_KEY", "sk-rpm-0c7b55", 1);
  FakeModelServer server;
  server.Answer([](const httplib::Request&, httplib::Response& res) {
    res.set_content(Completion("No kernel this time.", "stop"), "application/json");
  });
  Cluster c("gateway_rpm");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  const std::string registry =
      WriteRegistry(c, "fake-model", "openai", server.base_url(), "PTXB_RPM_TEST_KEY",
                    {{"limits", {{"rpm", kRpm}}}});
  c.AddRealGateway({"--models", registry, "--serve", "fake-model", "--slots", "8"});
  const auto start = std::chrono::steady_clock::now();
  const std::string exp = SubmitSpec(c, "gateway-rpm", "fake-model", kCalls, 1);
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();

  // Until every trajectory ends, or the server sees a violation.
  nlohmann::json status;
  std::string violation;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(90)) {
    violation = FirstViolation(server.Arrivals());
    if (!violation.empty()) break;
    status = c.Status(exp);
    if (status.is_object() && status["trajectories"]["terminal"] == kCalls) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  const std::vector<FakeModelServer::TimePoint> arrivals = server.Arrivals();
  std::string times;
  for (const auto& t : arrivals) absl::StrAppend(&times, " ", Seconds(t - start).count());
  std::printf("arrivals (s after submit):%s\n", times.c_str());

  ASSERT_EQ(FirstViolation(arrivals), "") << "arrivals:" << times;
  ASSERT_EQ(status["trajectories"]["terminal"], kCalls) << status.dump() << "\narrivals:" << times;
  EXPECT_EQ(status["turns"]["completed"], kCalls);
  EXPECT_EQ(arrivals.size(), static_cast<size_t>(kCalls)) << "a limit is no reason to retry";
  // The limit delays calls but does not starve them: the first kRpm go at
  // once, the rest when the first window has passed.
  ASSERT_GE(arrivals.size(), static_cast<size_t>(kRpm));
  EXPECT_LT(Seconds(arrivals[kRpm - 1] - start).count(), 10.0) << times;
  EXPECT_LT(Seconds(arrivals.back() - arrivals.front()).count(), 60.0 + 10.0) << times;
}

}  // namespace
}  // namespace ptxbench::testing
