#ifndef PTXBENCH_TESTING_AGENT_SESSION_FIXTURE_H_
#define PTXBENCH_TESTING_AGENT_SESSION_FIXTURE_H_

// What the tests that run a real pinned CLI through whole agent sessions
// in-process (agent_gateway::RunAgentSession) share: tests/agent_session_test.cc
// (the sessions as they should go) and tests/agent_attack_test.cc (the
// sessions of a hostile agent). The CLI is the test's parameter (its name);
// each test skips, saying so, where the CLI is not installed or the test
// does not run as root.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent_gateway/agent/session.h"
#include "agent_gateway/models/call_permits.h"
#include "agent_gateway/models/model_registry.h"
#include "agents/clis.h"
#include "common/clock.h"
#include "ptxbench/v1/executor.pb.h"
#include "sandbox/uid_range.h"
#include "testing/scripted_model.h"

namespace ptxbench::testing {

// The scheduler's side of AgentEval: each new action id is a turn, answered
// after `delay` with a failure for the first kernel and a pass after. A
// request goes through the wire format first, as over gRPC: one that does
// not parse back (a kernel that is not UTF-8 in a `string` field) gets
// INTERNAL, as the real scheduler's server answers it.
class FakeScheduler {
 public:
  // The first evaluation takes this long (the session long-polls for it).
  absl::Duration first_delay = absl::ZeroDuration();
  std::atomic<bool> block{false};  // never answer (a cancelled session's)

  absl::StatusOr<ptxbench::v1::AgentEvalResponse> operator()(
      const ptxbench::v1::AgentEvalRequest& r);
  std::vector<ptxbench::v1::AgentEvalRequest> requests();
  // The requests that did not parse back, counted.
  int unparsed();

 private:
  std::mutex mu_;
  std::map<std::string, int> turns_;
  std::vector<ptxbench::v1::AgentEvalRequest> requests_;
  std::vector<absl::Time> ready_;
  int unparsed_ = 0;
};

class AgentSessionFixture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // The registry entry of the scripted model (or what stands in front of
  // it on `port`), in the API the CLI speaks; its model id "pinned-model",
  // its key "sk-session-test".
  void UseModel(const ScriptedModel& model) { UseModelAt(model.port()); }
  void UseModelAt(int port);

  agent_gateway::SessionOptions Options(FakeScheduler& scheduler);
  ptxbench::v1::Task Task(const std::string& task_id, int64_t token_budget = 1'000'000);

  // A step that runs `command` in the CLI's shell tool.
  ScriptedModel::Step Shell(const std::string& command) const;
  // The model's script: run `probe` in the CLI's shell if given, then
  // write a kernel, evaluate, write another, evaluate.
  std::vector<ScriptedModel::Step> Steps(const std::string& workspace,
                                         const std::string& probe = "") const;
  // Processes still working in this test's sessions (their working
  // directory or command line under its folder): other tests' sessions may
  // run at the same time as the same uid.
  int Survivors() const;
  std::string Workspace(const std::string& task_id) const;

  const agents::AgentCli* cli_ = nullptr;
  std::filesystem::path dir_;
  std::unique_ptr<agent_gateway::ModelRegistry> registry_;
  // The sessions' uids: a block of two, claimed on the machine.
  std::unique_ptr<sandbox::UidBlock> block_;
  std::unique_ptr<sandbox::UidRange> uids_;
  // No limits: these sessions are alone (the fleet's limits have tests of
  // their own: tests/fleet_limits_test.cc, model_proxy_test).
  agent_gateway::LocalCallPermits permits_{{}, Clock::Real()};
};

// The pinned CLI's install and the evaluate tool, as the build has them.
std::string AgentClisDir();
std::string AgentToolBinary();

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_AGENT_SESSION_FIXTURE_H_
