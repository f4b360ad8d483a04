#include "agent_gateway/simulated/gateway.h"
#include "common/file.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

// Suite names start with "simulated_" so that `ctest -R simulated` selects them.
namespace ptxbench::agent_gateway {
namespace {

v1::Task LlmTask(int i, const std::string& model = "model-a") {
  v1::Task task;
  task.mutable_lease()->set_task_id(absl::StrCat("task-", i));
  task.mutable_lease()->set_lease_id(absl::StrCat("lease-", i));
  task.set_kind(v1::LLM);
  task.set_trajectory_id(absl::StrCat("traj-", i));
  task.set_turn(i % 3);
  task.mutable_llm()->set_model(model);
  return task;
}

SimulatedGatewayHandler::Options Fast() {
  SimulatedGatewayHandler::Options o;
  o.seed = 4;
  o.latency = absl::ZeroDuration();
  return o;
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/ptxb_", name, "_", getpid());
}

TEST(simulated_gateway, AnswersAndLogsEveryModelCall) {
  std::string log = TempPath("request_log");
  std::remove(log.c_str());
  SimulatedGatewayHandler::Options o = Fast();
  o.request_log_path = log;
  auto handler = SimulatedGatewayHandler::Create(o);
  ASSERT_TRUE(handler.ok()) << handler.status();
  std::atomic<bool> cancelled{false};
  for (int i = 0; i < 3; ++i) {
    v1::CompleteRequest out = (*handler)->Run(LlmTask(i), cancelled);
    ASSERT_TRUE(out.has_llm());
    EXPECT_TRUE(out.llm().simulated());
  }
  EXPECT_EQ(ReadFile(log).value_or(""), "traj-0 0\ntraj-1 1\ntraj-2 2\n");
  std::remove(log.c_str());
}

TEST(simulated_gateway, UnopenableRequestLogFailsCreate) {
  SimulatedGatewayHandler::Options o = Fast();
  o.request_log_path = "/nonexistent-dir/ptxb/log";
  EXPECT_EQ(SimulatedGatewayHandler::Create(o).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(simulated_gateway, InjectedFailuresAreModelApiAndNotLogged) {
  std::string log = TempPath("failure_log");
  std::remove(log.c_str());
  SimulatedGatewayHandler::Options o = Fast();
  o.faults.failure_rate = 1.0;
  o.request_log_path = log;
  auto handler = SimulatedGatewayHandler::Create(o);
  ASSERT_TRUE(handler.ok());
  std::atomic<bool> cancelled{false};
  v1::CompleteRequest out = (*handler)->Run(LlmTask(1), cancelled);
  ASSERT_TRUE(out.has_failure());
  EXPECT_EQ(out.failure().failure_class(), v1::MODEL_API);
  EXPECT_EQ(out.failure().retry_after_ms(), 100);
  EXPECT_EQ(ReadFile(log).value_or(""), "");
  std::remove(log.c_str());
}

TEST(simulated_gateway, UnservedModelIsTerminal) {
  SimulatedGatewayHandler::Options o = Fast();
  o.models = {"model-a"};
  auto handler = SimulatedGatewayHandler::Create(o);
  ASSERT_TRUE(handler.ok());
  std::atomic<bool> cancelled{false};
  EXPECT_TRUE((*handler)->Run(LlmTask(1, "model-a"), cancelled).has_llm());
  v1::CompleteRequest out = (*handler)->Run(LlmTask(2, "model-z"), cancelled);
  ASSERT_TRUE(out.has_failure());
  EXPECT_EQ(out.failure().failure_class(), v1::TERMINAL);
}

TEST(simulated_gateway, CrashHookRunsRightAfterLeasing) {
  SimulatedGatewayHandler::Options o = Fast();
  o.faults.crash_rate = 1.0;
  int crashes = 0;
  o.faults.crash = [&crashes] { ++crashes; };
  std::string log = TempPath("crash_log");
  std::remove(log.c_str());
  o.request_log_path = log;
  auto handler = SimulatedGatewayHandler::Create(o);
  ASSERT_TRUE(handler.ok());
  std::atomic<bool> cancelled{false};
  v1::CompleteRequest out = (*handler)->Run(LlmTask(1), cancelled);
  EXPECT_EQ(crashes, 1);
  EXPECT_TRUE(out.has_failure());
  EXPECT_EQ(ReadFile(log).value_or(""), "");  // died before calling the model
  std::remove(log.c_str());
}

TEST(simulated_gateway, CapabilitiesServeAnyModelByDefault) {
  v1::Capabilities any = SimulatedGatewayCapabilities({}, 16);
  EXPECT_TRUE(any.serves_any_model());
  EXPECT_EQ(any.slots(), 16);
  EXPECT_TRUE(any.simulated());
  v1::Capabilities some = SimulatedGatewayCapabilities({"a", "b"}, 2);
  EXPECT_FALSE(some.serves_any_model());
  ASSERT_EQ(some.models_size(), 2);
  EXPECT_EQ(some.models(1), "b");
}

}  // namespace
}  // namespace ptxbench::agent_gateway
