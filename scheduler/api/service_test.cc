// gRPC tests: the real services on an in-process server at 127.0.0.1:0.
#include "scheduler/api/service.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/hash.h"
#include "agents/clis.h"
#include "gtest/gtest.h"
#include "scheduler/api/service_fixture.h"

namespace ptxbench::scheduler {
namespace {

namespace v1 = ::ptxbench::v1;

constexpr char kSpec[] = R"({
  "name": "svc-test", "models": ["m1"], "definitions": ["gemm_n7168_k5120"],
  "prompt_tags": ["ptxb-no-hint"], "samples": 2, "num_turns": 2, "target_speedup": 1.5
})";

class ServiceTest : public ServiceFixture {
 protected:
  std::string Register(v1::ExecutorKind kind) {
    grpc::ClientContext ctx;
    v1::RegisterRequest req;
    req.set_kind(kind);
    req.set_name("test");
    req.mutable_capabilities()->set_serves_any_model(true);
    auto* gpu = req.mutable_capabilities()->add_gpus();
    gpu->set_sm_arch("sm_90");
    gpu->set_healthy(true);
    v1::RegisterResponse resp;
    EXPECT_TRUE(executor_->Register(&ctx, req, &resp).ok());
    return resp.executor_id();
  }

  grpc::Status Submit(const std::string& spec, v1::SubmitExperimentResponse* resp,
                      const std::string& lineage = "") {
    grpc::ClientContext ctx;
    v1::SubmitExperimentRequest req;
    req.set_spec_json(spec);
    req.set_spec_path("spec.json");
    req.set_lineage_json(lineage);
    return client_->SubmitExperiment(&ctx, req, resp);
  }

  v1::LeaseResponse Lease(const std::string& id, int64_t wait_ms) {
    grpc::ClientContext ctx;
    v1::LeaseRequest req;
    req.set_executor_id(id);
    req.set_wait_ms(wait_ms);
    v1::LeaseResponse resp;
    EXPECT_TRUE(executor_->Lease(&ctx, req, &resp).ok());
    return resp;
  }
};

TEST_F(ServiceTest, SubmitValidatesAndIsIdempotent) {
  v1::SubmitExperimentResponse resp;
  grpc::Status bad = Submit(R"({"name": "x", "models": []})", &resp);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.error_message().find("spec.json"), std::string::npos) << bad.error_message();

  ASSERT_TRUE(Submit(kSpec, &resp).ok());
  EXPECT_TRUE(resp.created());
  EXPECT_EQ(resp.trajectories(), 2);
  v1::SubmitExperimentResponse again;
  ASSERT_TRUE(Submit(kSpec, &again).ok());
  EXPECT_FALSE(again.created());
  EXPECT_EQ(again.experiment_id(), resp.experiment_id());
  // A lineage must be a JSON object: anything else is refused, nothing made.
  grpc::Status lineage = Submit(kSpec, &again, "[1, 2]");
  EXPECT_EQ(lineage.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(lineage.error_message().find("lineage_json: expected a JSON object"),
            std::string::npos)
      << lineage.error_message();
}

// A stage manifest is kept byte for byte: recording it again changes
// nothing, a recomputed stage's other manifest is kept beside it, and what is
// not a stage manifest is refused naming why.
TEST_F(ServiceTest, StageManifestsAreKeptByteForByteAndNeverOverwritten) {
  auto record = [&](const std::string& text, v1::RecordStageManifestResponse* resp) {
    grpc::ClientContext ctx;
    v1::RecordStageManifestRequest req;
    req.set_manifest_json(text);
    return client_->RecordStageManifest(&ctx, req, resp);
  };
  const std::string first =
      R"({"format": "ptxbench.stage.v1", "pipeline": "fixit", "stage": "failed",
 "kind": "select", "id": "st_0123456789abcdef0123", "started_unix_ms": 1})" "\n";
  const std::string again = absl::StrReplaceAll(first, {{"\"started_unix_ms\": 1", "\"started_unix_ms\": 2"}});
  v1::RecordStageManifestResponse r1, r2, r3;
  ASSERT_TRUE(record(first, &r1).ok());
  EXPECT_FALSE(r1.already_recorded());
  EXPECT_EQ(r1.manifest().sha256(), Sha256Hex(first));
  EXPECT_EQ(r1.manifest().stage(), "failed");
  ASSERT_TRUE(record(first, &r2).ok());
  EXPECT_TRUE(r2.already_recorded());
  EXPECT_EQ(r2.manifest().recorded_unix_ms(), r1.manifest().recorded_unix_ms());
  ASSERT_TRUE(record(again, &r3).ok());
  EXPECT_FALSE(r3.already_recorded());

  grpc::ClientContext ctx;
  v1::ListStageManifestsRequest req;
  req.set_pipeline("fixit");
  v1::ListStageManifestsResponse list;
  ASSERT_TRUE(client_->ListStageManifests(&ctx, req, &list).ok());
  ASSERT_EQ(list.manifests_size(), 2);
  std::set<std::string> texts;
  for (const v1::StageManifest& m : list.manifests()) {
    EXPECT_EQ(m.stage_id(), "st_0123456789abcdef0123");
    EXPECT_EQ(Sha256Hex(m.manifest_json()), m.sha256());
    texts.insert(m.manifest_json());
  }
  EXPECT_EQ(texts, (std::set<std::string>{first, again}));
  grpc::ClientContext other_ctx;
  req.set_pipeline("kernelgen");
  ASSERT_TRUE(client_->ListStageManifests(&other_ctx, req, &list).ok());
  EXPECT_EQ(list.manifests_size(), 0);

  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"[1]", "not a JSON object"},
           {R"({"format": "ptxbench.sft.v1"})", "\"format\" is \"ptxbench.sft.v1\""},
           {R"({"format": "ptxbench.stage.v1", "id": "st_1", "pipeline": "p", "kind": "select"})",
            "\"stage\" is not a non-empty string"},
           {R"({"format": "ptxbench.stage.v1", "id": "x", "pipeline": "p", "stage": "s",
                "kind": "select"})", "not a stage id"}}) {
    v1::RecordStageManifestResponse bad;
    grpc::Status st = record(text, &bad);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << text;
    EXPECT_NE(st.error_message().find(why), std::string::npos) << st.error_message();
  }
}

// A one-off evaluation of a Triton kernel (`ptxbench eval kernel.py`) names a
// Triton tag (a CUDA one would be refused for its language), is refused
// while no worker runs Triton, and reaches one that does as it was written.
TEST_F(ServiceTest, AOneOffTritonEvaluationGoesToAWorkerThatRunsTriton) {
  const std::string kernel = "import triton\n@triton.jit\ndef k(x):\n    pass\ndef run(A, B, C):\n"
                             "    k[(1,)](A)\n";
  auto submit = [&](v1::SubmitEvalResponse* resp) {
    grpc::ClientContext ctx;
    v1::SubmitEvalRequest req;
    req.mutable_eval()->set_definition("gemm_n7168_k5120");
    req.mutable_eval()->set_language("triton");
    req.mutable_eval()->set_kernel_source(kernel);
    req.mutable_eval()->set_mode(v1::FULL);
    return client_->SubmitEval(&ctx, req, resp);
  };
  Register(v1::WORKER);  // no Triton
  v1::SubmitEvalResponse refused;
  grpc::Status status = submit(&refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("runs Triton"));

  grpc::ClientContext ctx;
  v1::RegisterRequest req;
  req.set_kind(v1::WORKER);
  req.set_name("triton");
  req.mutable_capabilities()->set_triton("triton 3.6.0 at /usr/bin/python3");
  auto* gpu = req.mutable_capabilities()->add_gpus();
  gpu->set_sm_arch("sm_90");
  gpu->set_healthy(true);
  v1::RegisterResponse registered;
  ASSERT_TRUE(executor_->Register(&ctx, req, &registered).ok());
  v1::SubmitEvalResponse resp;
  status = submit(&resp);
  ASSERT_TRUE(status.ok()) << status.error_message();
  v1::LeaseResponse lease = Lease(registered.executor_id(), 1000);
  ASSERT_TRUE(lease.has_task()) << "the Triton worker got nothing";
  EXPECT_EQ(lease.task().eval().language(), "triton");
  EXPECT_EQ(lease.task().eval().kernel_source(), kernel);
}

TEST_F(ServiceTest, LongPollLeaseWakesWhenWorkArrives) {
  std::string gw = Register(v1::GATEWAY);
  auto start = std::chrono::steady_clock::now();
  v1::LeaseResponse empty = Lease(gw, 200);
  EXPECT_FALSE(empty.has_task());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));

  v1::LeaseResponse got;
  std::thread poller([&] { got = Lease(gw, 10'000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  v1::SubmitExperimentResponse resp;
  ASSERT_TRUE(Submit(kSpec, &resp).ok());
  poller.join();
  ASSERT_TRUE(got.has_task());
  EXPECT_EQ(got.task().kind(), v1::LLM);
  EXPECT_EQ(got.task().experiment_id(), resp.experiment_id());
}

// Agent mode over the wire: a session's evaluate call waits in a long poll
// that wakes when its evaluation ends, not at the end of the wait.
TEST_F(ServiceTest, AnAgentEvalLongPollWakesWhenTheEvaluationEnds) {
  const std::string worker = Register(v1::WORKER);
  grpc::ClientContext reg_ctx;
  v1::RegisterRequest reg;
  reg.set_kind(v1::GATEWAY);
  reg.set_name("agents");
  reg.mutable_capabilities()->set_agent_slots(1);
  v1::AgentCliInstall* cli = reg.mutable_capabilities()->add_agent_clis();
  cli->set_name("codex");
  cli->set_version(agents::FindAgentCli("codex")->version);
  v1::RegisterResponse registered;
  ASSERT_TRUE(executor_->Register(&reg_ctx, reg, &registered).ok());
  const std::string gateway = registered.executor_id();
  v1::SubmitExperimentResponse submitted;
  grpc::Status status = Submit(absl::StrCat(R"({
    "name": "svc-agent", "models": ["m1"], "definitions": ["gemm_n7168_k5120"],
    "prompt_tags": ["ptxb-no-hint"], "samples": 1, "target_speedup": 1.5, "mode": "agent",
    "agent": {"cli": "codex", "cli_version": ")", cli->version(), R"(", "token_budget": 1000}
  })"), &submitted);
  ASSERT_TRUE(status.ok()) << status.error_message();

  v1::LeaseResponse session;
  {
    grpc::ClientContext ctx;
    v1::LeaseRequest req;
    req.set_executor_id(gateway);
    req.add_kinds(v1::AGENT);
    ASSERT_TRUE(executor_->Lease(&ctx, req, &session).ok());
  }
  ASSERT_EQ(session.task().kind(), v1::AGENT);
  auto agent_eval = [&](int64_t wait_ms, v1::AgentEvalResponse* out) {
    grpc::ClientContext ctx;
    v1::AgentEvalRequest req;
    req.set_executor_id(gateway);
    *req.mutable_lease() = session.task().lease();
    req.set_action_id("a1");
    req.set_kernel_source("__global__ void k() {}");
    req.set_wait_ms(wait_ms);
    return executor_->AgentEval(&ctx, req, out);
  };
  v1::AgentEvalResponse first;
  ASSERT_TRUE(agent_eval(0, &first).ok());
  EXPECT_FALSE(first.done());

  v1::AgentEvalResponse waited;
  grpc::Status waited_status;
  const auto start = std::chrono::steady_clock::now();
  std::thread poller([&] { waited_status = agent_eval(20'000, &waited); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  v1::Task eval = Lease(worker, 1000).task();
  ASSERT_EQ(eval.kind(), v1::EVAL);
  grpc::ClientContext ctx;
  v1::CompleteRequest done;
  done.set_executor_id(worker);
  *done.mutable_lease() = eval.lease();
  done.mutable_eval()->set_status(v1::COMPILE_ERROR);
  done.mutable_eval()->set_compile_log("error: expected ';'");
  v1::CompleteResponse out;
  ASSERT_TRUE(executor_->Complete(&ctx, done, &out).ok());
  poller.join();
  ASSERT_TRUE(waited_status.ok()) << waited_status.error_message();
  EXPECT_TRUE(waited.done());
  EXPECT_EQ(waited.result().status(), v1::COMPILE_ERROR);
  EXPECT_NE(waited.feedback().find("expected ';'"), std::string::npos) << waited.feedback();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10))
      << "woken by the evaluation, not by the end of its wait";
}

TEST_F(ServiceTest, StaleCompletionIsRejectedOverTheWire) {
  std::string gw = Register(v1::GATEWAY);
  v1::SubmitExperimentResponse resp;
  ASSERT_TRUE(Submit(kSpec, &resp).ok());
  v1::Task task = Lease(gw, 1000).task();
  grpc::ClientContext ctx;
  v1::CompleteRequest req;
  req.set_executor_id(gw);
  req.mutable_lease()->set_task_id(task.lease().task_id());
  req.mutable_lease()->set_lease_id("ls_forged");
  req.mutable_llm()->set_text("```cpp\n__global__ void k(){}\n```");
  v1::CompleteResponse out;
  EXPECT_EQ(executor_->Complete(&ctx, req, &out).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  grpc::ClientContext ok_ctx;
  *req.mutable_lease() = task.lease();
  EXPECT_TRUE(executor_->Complete(&ok_ctx, req, &out).ok());
}

TEST_F(ServiceTest, CompleteWithNextLeasesTheNextTaskInTheSameCall) {
  std::string gw = Register(v1::GATEWAY);
  v1::SubmitExperimentResponse resp;
  ASSERT_TRUE(Submit(kSpec, &resp).ok());
  v1::Task first = Lease(gw, 1000).task();
  ASSERT_EQ(first.kind(), v1::LLM);
  auto complete = [&](const v1::LeaseRef& lease, int next_kind, v1::CompleteResponse* out) {
    grpc::ClientContext ctx;
    v1::CompleteRequest req;
    req.set_executor_id(gw);
    *req.mutable_lease() = lease;
    req.mutable_llm()->set_text("```cpp\n__global__ void k(){}\n```");
    req.mutable_next()->add_kinds(static_cast<v1::TaskKind>(next_kind));
    return executor_->Complete(&ctx, req, out);
  };
  v1::CompleteResponse out;
  ASSERT_TRUE(complete(first.lease(), v1::LLM, &out).ok());
  ASSERT_TRUE(out.next().has_task()) << "the second trajectory's model call";
  const v1::Task second = out.next().task();
  EXPECT_EQ(second.kind(), v1::LLM);
  EXPECT_NE(second.lease().task_id(), first.lease().task_id());

  // A report that is refused leases nothing.
  v1::LeaseRef forged = second.lease();
  forged.set_lease_id("ls_forged");
  v1::CompleteResponse refused;
  EXPECT_EQ(complete(forged, v1::LLM, &refused).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_FALSE(refused.has_next());

  // A next of an unknown kind refuses the lease only: the report stands.
  v1::CompleteResponse bad_next;
  ASSERT_TRUE(complete(second.lease(), 99, &bad_next).ok());
  EXPECT_FALSE(bad_next.next().has_task());
  std::string worker = Register(v1::WORKER);
  EXPECT_EQ(Lease(worker, 1000).task().kind(), v1::EVAL);
  EXPECT_EQ(Lease(worker, 1000).task().kind(), v1::EVAL) << "both reports were accepted";
}

TEST_F(ServiceTest, UnknownExecutorIsToldToRegisterAndDrainIsObeyed) {
  v1::LeaseResponse unknown = Lease("gw_nobody", 0);
  EXPECT_TRUE(unknown.reregister());
  std::string gw = Register(v1::GATEWAY);
  grpc::ClientContext ctx;
  v1::DrainRequest drain;
  drain.set_executor_id(gw);
  v1::DrainResponse drained;
  ASSERT_TRUE(client_->Drain(&ctx, drain, &drained).ok());
  v1::SubmitExperimentResponse resp;
  ASSERT_TRUE(Submit(kSpec, &resp).ok());
  v1::LeaseResponse none = Lease(gw, 1000);
  EXPECT_TRUE(none.drain());
  EXPECT_FALSE(none.has_task());
}

TEST_F(ServiceTest, StatusAndWatchReportProgress) {
  v1::SubmitExperimentResponse resp;
  ASSERT_TRUE(Submit(kSpec, &resp).ok());
  grpc::ClientContext ctx;
  v1::GetExperimentRequest get;
  get.set_experiment_id(resp.experiment_id());
  v1::GetExperimentResponse exp;
  ASSERT_TRUE(client_->GetExperiment(&ctx, get, &exp).ok());
  EXPECT_EQ(exp.progress().total(), 2);
  EXPECT_EQ(exp.progress().tasks_queued(), 2);
  EXPECT_EQ(exp.progress().by_state().at("AWAITING_MODEL"), 2);

  // Cancel it, then a watch sees it finished.
  grpc::ClientContext cctx;
  v1::CancelRequest cancel;
  cancel.set_experiment_id(resp.experiment_id());
  v1::CancelResponse cancelled;
  ASSERT_TRUE(client_->Cancel(&cctx, cancel, &cancelled).ok());
  EXPECT_EQ(cancelled.cancelled(), 2);

  grpc::ClientContext wctx;
  v1::WatchExperimentRequest watch;
  watch.set_experiment_id(resp.experiment_id());
  watch.set_interval_ms(100);
  auto reader = client_->WatchExperiment(&wctx, watch);
  v1::WatchExperimentResponse update;
  bool finished = false;
  while (reader->Read(&update)) finished = update.finished();
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_TRUE(finished);
  EXPECT_EQ(update.progress().by_state().at("CANCELLED"), 2);

  grpc::ClientContext bad;
  get.set_experiment_id("exp_missing");
  EXPECT_EQ(client_->GetExperiment(&bad, get, &exp).error_code(), grpc::StatusCode::NOT_FOUND);
}

// A trajectory of 10 turns of 440 kB answers (4.4 MB) is more than one
// message may carry by gRPC's default 4 MiB limit, which this test's client
// keeps: GetTrajectory cannot return it, the ReadTrajectories stream can.
TEST_F(ServiceTest, ALongTrajectoryStreamsUnderTheDefaultMessageLimit) {
  v1::SubmitExperimentResponse resp;
  ASSERT_TRUE(Submit(R"({"name": "long", "models": ["m1"], "definitions": ["gemm_n7168_k5120"],
      "prompt_tags": ["ptxb-no-hint"], "samples": 1, "num_turns": 10, "target_speedup": 1.5})",
                     &resp)
                  .ok());
  const std::string gw = Register(v1::GATEWAY);
  for (int turn = 0; turn < 10; ++turn) {
    v1::LeaseResponse lease = Lease(gw, 5000);
    ASSERT_TRUE(lease.has_task()) << "turn " << turn;
    grpc::ClientContext ctx;
    v1::CompleteRequest req;
    req.set_executor_id(gw);
    *req.mutable_lease() = lease.task().lease();
    // No code block: the turn ends without an evaluation.
    req.mutable_llm()->set_text(absl::StrCat("turn ", turn, ": ", std::string(440'000, 'x')));
    req.mutable_llm()->set_finish_reason("stop");
    v1::CompleteResponse out;
    ASSERT_TRUE(executor_->Complete(&ctx, req, &out).ok());
  }
  v1::ListTrajectoriesRequest list;
  list.set_experiment_id("long");
  grpc::ClientContext list_ctx;
  v1::ListTrajectoriesResponse listed;
  ASSERT_TRUE(client_->ListTrajectories(&list_ctx, list, &listed).ok());
  ASSERT_EQ(listed.trajectories_size(), 1);
  const std::string id = listed.trajectories(0).trajectory_id();

  grpc::ClientContext get_ctx;
  v1::GetTrajectoryRequest get;
  get.set_trajectory_id(id);
  v1::GetTrajectoryResponse whole;
  EXPECT_EQ(client_->GetTrajectory(&get_ctx, get, &whole).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);

  grpc::ClientContext read_ctx;
  v1::ReadTrajectoriesRequest read;
  read.set_trajectory_id(id);
  auto reader = client_->ReadTrajectories(&read_ctx, read);
  v1::ReadTrajectoriesResponse part;
  int messages = 0, turns = 0;
  while (reader->Read(&part)) {
    ++messages;
    for (const v1::Trajectory& t : part.trajectories()) {
      EXPECT_EQ(t.summary().trajectory_id(), id);
      EXPECT_EQ(t.continued(), turns > 0);
      for (const v1::Turn& turn : t.turns()) {
        EXPECT_EQ(turn.index(), turns);
        EXPECT_EQ(turn.response().text().size(), 440'000 + absl::StrCat("turn ", turns, ": ").size());
        ++turns;
      }
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(turns, 10);
  EXPECT_GE(messages, 3) << "at most about 2 MiB per message";

  // Its report and the definitions it used come over the same service.
  grpc::ClientContext report_ctx;
  v1::ReportRequest report_request;
  report_request.add_experiment_ids("long");
  report_request.add_groupings()->add_by("model");
  v1::ReportResponse report;
  ASSERT_TRUE(client_->GetReport(&report_ctx, report_request, &report).ok());
  EXPECT_EQ(report.experiments(0).total().model_calls(), 10);
  EXPECT_EQ(report.experiments(0).total().outcomes_by_turn(9).classes().at("no_kernel"), 1);
  grpc::ClientContext definitions_ctx;
  v1::GetDefinitionsRequest definitions_request;
  definitions_request.set_experiment_id("long");
  v1::GetDefinitionsResponse definitions;
  ASSERT_TRUE(client_->GetDefinitions(&definitions_ctx, definitions_request, &definitions).ok());
  ASSERT_EQ(definitions.definitions_size(), 1);
  EXPECT_EQ(definitions.definitions(0).name(), "gemm_n7168_k5120");
  EXPECT_FALSE(definitions.definitions(0).workload_lines().empty());
}

// Call permits over the wire: one window for every caller, the refusals'
// codes, and what one acquire costs (printed: a model call takes seconds).
TEST_F(ServiceTest, CallPermitsAreSharedAndRefusalsAreClear) {
  const std::string gateway_token = CreateToken(v1::ROLE_GATEWAY, "gw");
  auto gateway = ExecutorStub(gateway_token);
  auto acquire = [&](const std::string& executor, int64_t tokens, v1::AcquireCallPermitResponse* r) {
    grpc::ClientContext ctx;
    v1::AcquireCallPermitRequest request;
    request.set_executor_id(executor);
    request.set_model("m");
    request.set_tokens(tokens);
    request.mutable_limits()->set_concurrency(1);
    return gateway->AcquireCallPermit(&ctx, request, r);
  };
  auto release = [&](const std::string& executor, uint64_t id) {
    grpc::ClientContext ctx;
    v1::ReleaseCallPermitRequest request;
    request.set_executor_id(executor);
    request.set_permit_id(id);
    v1::ReleaseCallPermitResponse r;
    return gateway->ReleaseCallPermit(&ctx, request, &r);
  };
  v1::AcquireCallPermitResponse a, b;
  ASSERT_TRUE(acquire("ex_a", 100, &a).ok());
  ASSERT_NE(a.permit_id(), 0u);
  EXPECT_EQ(a.permit_ttl_ms(), 30'000);
  ASSERT_TRUE(acquire("ex_b", 100, &b).ok());
  EXPECT_EQ(b.permit_id(), 0u) << "concurrency 1 is ex_a's";
  EXPECT_GT(b.wait_ms(), 0);
  EXPECT_EQ(release("ex_b", a.permit_id()).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(acquire("ex_a", -1, &b).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(release("ex_a", a.permit_id()).ok());
  EXPECT_EQ(release("ex_a", a.permit_id()).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(release("ex_a", 12345).error_code(), grpc::StatusCode::NOT_FOUND);
  // A worker's token may not spend a model's limits.
  auto worker = ExecutorStub(CreateToken(v1::ROLE_WORKER, "wk"));
  grpc::ClientContext ctx;
  v1::AcquireCallPermitRequest request;
  request.set_executor_id("ex_w");
  request.set_model("m");
  EXPECT_EQ(worker->AcquireCallPermit(&ctx, request, &b).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  std::vector<double> ms;
  for (int i = 0; i < 1000; ++i) {
    const absl::Time start = absl::Now();
    ASSERT_TRUE(acquire("ex_a", 100, &a).ok());
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
    ASSERT_NE(a.permit_id(), 0u);
    ASSERT_TRUE(release("ex_a", a.permit_id()).ok());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("AcquireCallPermit over loopback, 1000 granted: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
              ms[500], ms[990], ms.back());
}

}  // namespace
}  // namespace ptxbench::scheduler
