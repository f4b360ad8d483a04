// Agent sessions in the state machine (core_agent.cc): one AGENT task per
// trajectory, each evaluate call a turn evaluated by ordinary eval tasks,
// ends by the session's outcome, losses re-run only when nothing was
// evaluated, cancel and restart.
#include <map>
#include <set>

#include "agents/clis.h"
#include "gmock/gmock.h"
#include "scheduler/state/core.h"
#include "scheduler/state/core_test_util.h"
#include "verdict/verdict.h"

namespace ptxbench::scheduler {

using experiment_spec::AgentSettings;
using experiment_spec::DeriveExperimentId;
using experiment_spec::ExpandedExperiment;

namespace {

namespace v1 = ::ptxbench::v1;

constexpr char kKernel[] = "__global__ void k() {}\n";

class CoreAgentTest : public CoreFixture {
 protected:
  // An agent experiment of `n` codex sessions; target 1.5.
  ExpandedExperiment AgentExperiment(const std::string& name, int n, int64_t max_evaluations = 0) {
    ExpandedExperiment x = MakeExperiment(name, n, static_cast<int>(max_evaluations));
    AgentSettings a;
    a.cli = "codex";
    a.cli_version = agents::FindAgentCli("codex")->version;
    a.token_budget = 100000;
    a.max_evaluations = max_evaluations;
    x.agent = a;
    return x;
  }

  // A gateway that runs `slots` sessions of the pinned codex, and no model
  // calls of its own.
  std::string RegisterAgentGateway(int slots = 2, const std::string& name = "agw") {
    v1::RegisterRequest r;
    r.set_kind(v1::GATEWAY);
    r.set_name(name);
    r.mutable_capabilities()->set_agent_slots(slots);
    v1::AgentCliInstall* cli = r.mutable_capabilities()->add_agent_clis();
    cli->set_name("codex");
    cli->set_version(agents::FindAgentCli("codex")->version);
    return core_->Register(r)->executor_id();
  }

  std::optional<v1::Task> LeaseOf(const std::string& executor, std::set<StepKind> kinds) {
    auto task = core_->TryLease(executor, kinds);
    EXPECT_TRUE(task.ok()) << task.status();
    if (!task.ok() || !task->has_value()) return std::nullopt;
    holders_[(*task)->lease().task_id()] = executor;
    return **task;
  }

  v1::AgentEvalRequest EvalRequest(const v1::Task& session, const std::string& action,
                                   double cost_usd = 0) {
    v1::AgentEvalRequest r;
    r.set_executor_id(holders_[session.lease().task_id()]);
    *r.mutable_lease() = session.lease();
    r.set_action_id(action);
    r.set_kernel_source(kKernel);
    r.mutable_usage_since_last_eval()->set_cost_usd(cost_usd);
    r.mutable_usage_since_last_eval()->set_model_calls(3);
    r.mutable_usage_since_last_eval()->mutable_usage()->set_input_tokens(1000);
    return r;
  }

  absl::Status End(const v1::Task& session, v1::AgentEnd end, double cost_usd = 0) {
    v1::CompleteRequest c = ReportOn(session);
    c.mutable_agent()->set_end(end);
    c.mutable_agent()->set_reason("synthetic end");
    c.mutable_agent()->mutable_usage_since_last_eval()->set_cost_usd(cost_usd);
    return core_->Complete(c);
  }

  // Evaluates the session's pending turn on `worker` with `status`, `speedup`.
  void EvaluatePending(const std::string& worker, v1::EvalStatus status, double speedup) {
    std::optional<v1::Task> eval = LeaseOf(worker, {});
    ASSERT_TRUE(eval.has_value()) << "no evaluation queued";
    ASSERT_EQ(eval->kind(), v1::EVAL);
    EXPECT_EQ(eval->eval().kernel_source(), kKernel) << "the kernel the session sent";
    ASSERT_TRUE(CompleteEval(*eval, status, speedup).ok());
  }

  // A gateway and a worker, one session of an agent experiment, leased.
  v1::Task StartSession(int64_t max_evaluations = 0) {
    agw_ = RegisterAgentGateway();
    worker_ = RegisterWorker();
    Submit(AgentExperiment("agent", 1, max_evaluations));
    std::optional<v1::Task> session = LeaseOf(agw_, {StepKind::kAgent});
    EXPECT_TRUE(session.has_value());
    return session.value_or(v1::Task());
  }

  std::string agw_, worker_;

  std::string Reason() {
    auto s = db_->Prepare("SELECT reason FROM trajectories");
    EXPECT_TRUE(s.ok() && *s->Step());
    return s->ColumnText(0);
  }
};

#define ADVANCE(d)                   \
  do {                               \
    clock_.Advance(d);               \
    ASSERT_TRUE(core_->Tick().ok()); \
  } while (0)

// starter fixit: each session's lease carries its item's broken kernel and
// log; a session of an ordinary item carries none.
TEST_F(CoreAgentTest, AFixItSessionCarriesItsKernelAndLog) {
  agw_ = RegisterAgentGateway(/*slots=*/3);
  ExpandedExperiment x = AgentExperiment("agent-fixit", 2);
  x.agent->starter = "fixit";
  x.trajectories[0].repair_kernel = "// broken 0\n";
  x.trajectories[0].repair_log = "error 0";
  x.trajectories[1].repair_kernel = "// broken 1\n";
  x.trajectories[1].repair_log = "error 1";
  Submit(x);
  std::map<std::string, std::string> logs;
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::Task> session = LeaseOf(agw_, {StepKind::kAgent});
    ASSERT_TRUE(session.has_value());
    EXPECT_EQ(session->agent().settings().starter(), "fixit");
    logs[session->agent().starter_kernel()] = session->agent().starter_log();
  }
  EXPECT_EQ(logs, (std::map<std::string, std::string>{{"// broken 0\n", "error 0"},
                                                      {"// broken 1\n", "error 1"}}));
  Submit(AgentExperiment("agent-plain", 1));
  std::optional<v1::Task> plain = LeaseOf(agw_, {StepKind::kAgent});
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->agent().settings().starter(), "none");
  EXPECT_EQ(plain->agent().starter_kernel(), "");
}

TEST_F(CoreAgentTest, EachEvaluateCallIsATurnOfTheOneSession) {
  const std::string agw = RegisterAgentGateway();
  const std::string llm_gw = RegisterGateway("llm-only");
  const std::string wk = RegisterWorker();
  Submit(AgentExperiment("agent", 1));
  EXPECT_EQ(TrajectoriesIn(v1::AWAITING_AGENT), 1);
  EXPECT_EQ(TasksOfKind(StepKind::kAgent), 1);
  EXPECT_TRUE(NothingFor(llm_gw)) << "a gateway without agent slots runs no session";
  EXPECT_FALSE(LeaseOf(agw, {StepKind::kLlm}).has_value()) << "asked for model calls only";

  std::optional<v1::Task> session = LeaseOf(agw, {StepKind::kAgent});
  ASSERT_TRUE(session.has_value());
  EXPECT_EQ(session->kind(), v1::AGENT);
  EXPECT_EQ(session->agent().settings().cli(), "codex");
  EXPECT_EQ(session->agent().settings().token_budget(), 100000);
  EXPECT_EQ(session->agent().session(), 1);
  EXPECT_EQ(session->agent().system_prompt(), "SYSTEM PROMPT for ptxb-no-hint");
  EXPECT_EQ(session->agent().task_prompt(), "TASK: write gemm_n7168_k5120");

  auto first = core_->AgentEval(EvalRequest(*session, "a1", 0.10));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->turn(), 0);
  EXPECT_FALSE(first->done());
  EvaluatePending(wk, v1::PASSED, 2.0);
  auto result = core_->AgentEval(EvalRequest(*session, "a1", 0.10));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->done());
  EXPECT_EQ(result->result().status(), v1::PASSED);
  EXPECT_NE(result->feedback().find("2.0"), std::string::npos) << result->feedback();
  EXPECT_EQ(TrajectoriesIn(v1::AWAITING_AGENT), 1) << "the session goes on";

  auto second = core_->AgentEval(EvalRequest(*session, "a2", 0.05));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->turn(), 1);
  EvaluatePending(wk, v1::INCORRECT_NUMERICAL, 0);

  ASSERT_TRUE(End(*session, v1::AGENT_FINISHED, 0.01).ok());
  EXPECT_EQ(TrajectoriesIn(v1::SUBMITTED), 1) << "turn 0 met the 1.5x target";
  EXPECT_EQ(Count("SELECT turns_completed FROM trajectories"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM turns WHERE action_id IS NOT NULL"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories WHERE agent_outcome IS NOT NULL"), 1);
  EXPECT_EQ(Count("SELECT round(cost_usd * 100) FROM trajectories"), 16)
      << "each call's cost once: 0.10 + 0.05 + 0.01";
  EXPECT_NE(Reason().find("AGENT_FINISHED"), std::string::npos) << Reason();
}

// Held-out workloads (docs/FORMATS.md): the session's task file names the
// shown workloads only, and its evaluate call is answered with the shown
// part of the result (verdict::ShownPart), whatever the held-out one did.
TEST_F(CoreAgentTest, ASessionIsToldOfItsShownWorkloadsOnly) {
  agw_ = RegisterAgentGateway();
  worker_ = RegisterWorker();
  ExpandedExperiment x = AgentExperiment("agent-held", 1);
  x.trajectories[0].workloads = {"w-a", "w-held"};
  x.trajectories[0].held_out = {"w-held"};
  Submit(x);
  std::optional<v1::Task> session = LeaseOf(agw_, {StepKind::kAgent});
  ASSERT_TRUE(session.has_value());
  EXPECT_THAT(session->agent().workload_uuids(), ::testing::ElementsAre("w-a"));
  ASSERT_TRUE(core_->AgentEval(EvalRequest(*session, "a1")).ok());
  std::optional<v1::Task> eval = LeaseOf(worker_, {});
  ASSERT_TRUE(eval.has_value());
  EXPECT_THAT(eval->eval().held_out_workload_uuids(), ::testing::ElementsAre("w-held"));
  v1::CompleteRequest c = ReportOn(*eval);
  AddTraces(c.mutable_eval(), {{"w-a", v1::PASSED}, {"w-held", v1::RUNTIME_ERROR}});
  ASSERT_TRUE(core_->Complete(c).ok());
  auto answered = core_->AgentEval(EvalRequest(*session, "a1"));
  ASSERT_TRUE(answered.ok()) << answered.status();
  ASSERT_TRUE(answered->done());
  EXPECT_EQ(answered->result().status(), v1::PASSED);
  ASSERT_EQ(answered->result().traces_size(), 1);
  EXPECT_EQ(answered->result().traces(0).workload_uuid(), "w-a");
  EXPECT_EQ(answered->feedback().find("w-held"), std::string::npos) << answered->feedback();
  EXPECT_EQ(Count("SELECT correct FROM turns"), 0);
}

// profile_kernel (docs/AGENTS.md): only in an experiment that asks for
// profiles, whose sessions are told so; its evaluations are profiled, the
// session's ordinary ones are not.
TEST_F(CoreAgentTest, OnlyProfileKernelCallsAreProfiled) {
  {
    const v1::Task plain = StartSession();
    EXPECT_FALSE(plain.agent().profile());
    v1::AgentEvalRequest asked = EvalRequest(plain, "p1");
    asked.set_profile(true);
    auto refused = core_->AgentEval(asked);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(refused.status().message()),
                ::testing::HasSubstr("this experiment does not ask for profiles"));
    EXPECT_EQ(Count("SELECT count(*) FROM turns"), 0) << "nothing was evaluated";
  }
  const std::string profiling =
      RegisterWorker("profiling", "sm_90", "Nsight Compute 2025.3.1.0 at /usr/local/cuda/bin/ncu");
  ExpandedExperiment x = AgentExperiment("agent-profiled", 1);
  x.profile = true;
  Submit(x);
  std::optional<v1::Task> session = LeaseOf(agw_, {StepKind::kAgent});
  ASSERT_TRUE(session.has_value());
  EXPECT_TRUE(session->agent().profile());
  v1::AgentEvalRequest profiled = EvalRequest(*session, "p1");
  profiled.set_profile(true);
  ASSERT_TRUE(core_->AgentEval(profiled).ok());
  EXPECT_TRUE(NothingFor(worker_)) << "a worker that cannot profile got a profiled experiment's";
  std::optional<v1::Task> eval = LeaseOf(profiling, {});
  ASSERT_TRUE(eval.has_value());
  EXPECT_TRUE(eval->eval().profile());
  ASSERT_TRUE(CompleteEval(*eval, v1::PASSED, 1.0).ok());
  ASSERT_TRUE(core_->AgentEval(EvalRequest(*session, "e2")).ok());
  eval = LeaseOf(profiling, {});
  ASSERT_TRUE(eval.has_value());
  EXPECT_FALSE(eval->eval().profile()) << "evaluate_kernel is not profiled";
  EXPECT_EQ(Count("SELECT count(*) FROM turns WHERE profile = 1"), 1);
}

TEST_F(CoreAgentTest, ASessionThatMissedTheTargetEndsLimitsExceeded) {
  const std::optional<v1::Task> session = StartSession();
  ASSERT_TRUE(core_->AgentEval(EvalRequest(*session, "a1")).ok());
  EvaluatePending(worker_, v1::PASSED, 1.2);
  ASSERT_TRUE(End(*session, v1::AGENT_TOKEN_BUDGET).ok());
  EXPECT_EQ(TrajectoriesIn(v1::LIMITS_EXCEEDED), 1);
  EXPECT_NE(Reason().find("AGENT_TOKEN_BUDGET"), std::string::npos) << Reason();
  EXPECT_EQ(core_->Extend(DeriveExperimentId("agent"), 5).status().code(),
            absl::StatusCode::kInvalidArgument)
      << "turns do not limit a session";
}

TEST_F(CoreAgentTest, OneEvaluationInFlightAndARepeatedActionJoinsIt) {
  const std::optional<v1::Task> session = StartSession(/*max_evaluations=*/1);
  ASSERT_TRUE(core_->AgentEval(EvalRequest(*session, "a1", 0.5)).ok());
  auto again = core_->AgentEval(EvalRequest(*session, "a1", 0.5));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->turn(), 0);
  EXPECT_EQ(core_->AgentEval(EvalRequest(*session, "a2")).status().code(),
            absl::StatusCode::kFailedPrecondition)
      << "a second evaluation while the first runs";
  EXPECT_EQ(TasksOfKind(StepKind::kEval), 1);
  EXPECT_EQ(Count("SELECT round(cost_usd * 10) FROM trajectories"), 5) << "the repeat's usage "
                                                                          "is not counted again";
  EvaluatePending(worker_, v1::COMPILE_ERROR, 0);
  EXPECT_EQ(core_->AgentEval(EvalRequest(*session, "a3")).status().code(),
            absl::StatusCode::kFailedPrecondition)
      << "max_evaluations is 1";
  EXPECT_EQ(TasksOfKind(StepKind::kEval), 1);

  v1::AgentEvalRequest empty = EvalRequest(*session, "a4");
  empty.clear_kernel_source();
  EXPECT_EQ(core_->AgentEval(empty).status().code(), absl::StatusCode::kInvalidArgument);
  v1::AgentEvalRequest other = EvalRequest(*session, "a5");
  other.set_executor_id(RegisterWorker("intruder"));
  EXPECT_EQ(core_->AgentEval(other).status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(CoreAgentTest, SlotsAndInstalledClisDecideWhoRunsASession) {
  const std::string one_slot = RegisterAgentGateway(/*slots=*/1, "one");
  v1::RegisterRequest r;
  r.set_kind(v1::GATEWAY);
  r.set_name("claude-only");
  r.mutable_capabilities()->set_agent_slots(4);
  v1::AgentCliInstall* cli = r.mutable_capabilities()->add_agent_clis();
  cli->set_name("claude-code");
  cli->set_version(agents::FindAgentCli("claude-code")->version);
  const std::string claude_only = core_->Register(r)->executor_id();
  Submit(AgentExperiment("agent", 2));
  EXPECT_FALSE(LeaseOf(claude_only, {StepKind::kAgent}).has_value()) << "another CLI";
  EXPECT_TRUE(LeaseOf(one_slot, {StepKind::kAgent}).has_value());
  EXPECT_FALSE(LeaseOf(one_slot, {StepKind::kAgent}).has_value()) << "its one slot is taken";
  EXPECT_EQ(TasksIn(TaskState::kQueued), 1) << "the other session waits, holding nothing";
}

// agent.max_parallel caps the experiment's sessions at once, across
// gateways; another experiment's sessions are not held back by it.
TEST_F(CoreAgentTest, MaxParallelCapsAnExperimentsSessionsAtOnce) {
  const std::string a = RegisterAgentGateway(/*slots=*/4, "a");
  const std::string b = RegisterAgentGateway(/*slots=*/4, "b");
  ExpandedExperiment capped = AgentExperiment("capped", 3);
  capped.agent->max_parallel = 2;
  Submit(capped);
  std::optional<v1::Task> first = LeaseOf(a, {StepKind::kAgent});
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(LeaseOf(b, {StepKind::kAgent}).has_value());
  EXPECT_FALSE(LeaseOf(a, {StepKind::kAgent}).has_value()) << "two of it run already";
  Submit(AgentExperiment("free", 1));
  EXPECT_TRUE(LeaseOf(a, {StepKind::kAgent}).has_value()) << "another experiment's session";
  ASSERT_TRUE(End(*first, v1::AGENT_FINISHED).ok());
  EXPECT_TRUE(LeaseOf(b, {StepKind::kAgent}).has_value()) << "a session ended: the third runs";
}

TEST_F(CoreAgentTest, ASessionLostBeforeAnyEvaluationRunsAgainUpToMaxSessions) {
  const std::string agw = RegisterAgentGateway();
  Submit(AgentExperiment("agent", 1));
  for (int session = 1; session <= 3; ++session) {
    std::optional<v1::Task> s = LeaseOf(agw, {StepKind::kAgent});
    ASSERT_TRUE(s.has_value()) << "session " << session;
    EXPECT_EQ(s->agent().session(), session);
    ADVANCE(options_.lease_ttl + absl::Seconds(1));  // the gateway died
    ADVANCE(absl::Minutes(2));                       // past any backoff
  }
  EXPECT_EQ(TrajectoriesIn(v1::FAILED), 1) << "max_sessions is 3";
  EXPECT_EQ(Count("SELECT failure_class FROM trajectories"), v1::INFRA);
  EXPECT_NE(Reason().find("3 sessions lost"), std::string::npos) << Reason();
  EXPECT_EQ(*core_->Retry(DeriveExperimentId("agent"), v1::RETRY_INFRA), 1)
      << "nothing was evaluated, so a new session mixes with nothing";
  EXPECT_EQ(TrajectoriesIn(v1::AWAITING_AGENT), 1);
}

TEST_F(CoreAgentTest, ASessionLostAfterAnEvaluationEndsKeepingIt) {
  const std::optional<v1::Task> session = StartSession();
  ASSERT_TRUE(core_->AgentEval(EvalRequest(*session, "a1")).ok());
  EvaluatePending(worker_, v1::PASSED, 1.1);
  ADVANCE(options_.lease_ttl + absl::Seconds(1));
  EXPECT_EQ(TrajectoriesIn(v1::FAILED), 1);
  EXPECT_EQ(Count("SELECT failure_class FROM trajectories"), v1::INFRA);
  EXPECT_NE(Reason().find("which are kept"), std::string::npos) << Reason();
  EXPECT_EQ(Count("SELECT count(*) FROM turns WHERE eval_blob IS NOT NULL"), 1);
  EXPECT_EQ(*core_->Retry(DeriveExperimentId("agent"), v1::RETRY_ALL_FAILED), 0)
      << "a new session would mix with the evaluated one";
  EXPECT_FALSE(LeaseOf(agw_, {}).has_value());
}

TEST_F(CoreAgentTest, ACliThatCrashedEndsTheTrajectoryWithItsClass) {
  const std::optional<v1::Task> session = StartSession();
  ASSERT_TRUE(Fail(*session, v1::TERMINAL).ok());
  EXPECT_EQ(TrajectoriesIn(v1::FAILED), 1);
  EXPECT_EQ(Count("SELECT failure_class FROM trajectories"), v1::TERMINAL);
}

TEST_F(CoreAgentTest, CancelRevokesTheSessionAndItsEvaluation) {
  const std::optional<v1::Task> session = StartSession();
  ASSERT_TRUE(core_->AgentEval(EvalRequest(*session, "a1")).ok());
  EXPECT_EQ(*core_->CancelExperiment(DeriveExperimentId("agent")), 1);
  EXPECT_EQ(TrajectoriesIn(v1::CANCELLED), 1);
  EXPECT_EQ(TasksIn(TaskState::kCancelled), 2) << "the session and its queued evaluation";
  v1::HeartbeatRequest hb;
  hb.set_executor_id(agw_);
  *hb.add_leases() = session->lease();
  EXPECT_EQ(core_->Heartbeat(hb).revoked_size(), 1) << "the gateway stops the session";
  EXPECT_EQ(core_->AgentEval(EvalRequest(*session, "a1")).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(CoreAgentTest, ARestartKeepsTheSessionAndItsSettings) {
  const std::optional<v1::Task> session = StartSession();
  ASSERT_TRUE(core_->AgentEval(EvalRequest(*session, "a1")).ok());
  Restart();
  EvaluatePending(worker_, v1::PASSED, 3.0);
  auto result = core_->AgentEval(EvalRequest(*session, "a1"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->done());
  ASSERT_TRUE(End(*session, v1::AGENT_TARGET_MET).ok());
  EXPECT_EQ(TrajectoriesIn(v1::SUBMITTED), 1);
}

}  // namespace
}  // namespace ptxbench::scheduler
