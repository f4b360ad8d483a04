// Who may call what, for real: every RPC of both services, called through
// gRPC with no token, an unknown one, a revoked one and one of each role.
// The expected outcome of each is written here, apart from the scheduler's
// own table (access.cc), and docs/SECURITY.md's table is checked against both.
#include "scheduler/api/access.h"

#include <map>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "nlohmann/json.hpp"
#include "scheduler/api/service_fixture.h"

namespace ptxbench::scheduler {
namespace {

namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;

// The roles this test expects to get through, per RPC; the rest must be
// refused. "any" is every role.
const std::map<std::string, std::set<std::string>>& Expected() {
  static const auto* expected = new std::map<std::string, std::set<std::string>>{
      {"ClientService.SubmitExperiment", {"admin", "submit"}},
      {"ClientService.SubmitEval", {"admin", "submit"}},
      {"ClientService.GetExperiment", {"admin", "submit", "read"}},
      {"ClientService.ListExperiments", {"admin", "submit", "read"}},
      {"ClientService.ListTrajectories", {"admin", "submit", "read"}},
      {"ClientService.GetTrajectory", {"admin", "submit", "read"}},
      {"ClientService.ReadTrajectories", {"admin", "submit", "read"}},
      {"ClientService.GetReport", {"admin", "submit", "read"}},
      {"ClientService.GetDefinitions", {"admin", "submit", "read"}},
      {"ClientService.WatchExperiment", {"admin", "submit", "read"}},
      {"ClientService.Cancel", {"admin", "submit"}},
      {"ClientService.Retry", {"admin", "submit"}},
      {"ClientService.Extend", {"admin", "submit"}},
      {"ClientService.ListExecutors", {"admin", "submit", "read"}},
      {"ClientService.Drain", {"admin"}},
      {"ClientService.WhoAmI", {"admin", "submit", "read", "worker", "gateway"}},
      {"ClientService.CreateToken", {"admin"}},
      {"ClientService.ListTokens", {"admin"}},
      {"ClientService.RevokeToken", {"admin"}},
      {"ClientService.RecordStageManifest", {"admin", "submit"}},
      {"ClientService.ListStageManifests", {"admin", "submit", "read"}},
      {"ExecutorService.Register", {"admin", "worker", "gateway"}},
      {"ExecutorService.Lease", {"admin", "worker", "gateway"}},
      {"ExecutorService.Heartbeat", {"admin", "worker", "gateway"}},
      {"ExecutorService.Complete", {"admin", "worker", "gateway"}},
      {"ExecutorService.Leave", {"admin", "worker", "gateway"}},
      {"ExecutorService.AgentEval", {"admin", "worker", "gateway"}},
      {"ExecutorService.AcquireCallPermit", {"admin", "gateway"}},
      {"ExecutorService.ReleaseCallPermit", {"admin", "gateway"}},
      {"ExecutorService.RenewCallPermits", {"admin", "gateway"}},
  };
  return *expected;
}

const std::vector<std::string> kRoles = {"admin", "submit", "read", "worker", "gateway"};

std::vector<const google::protobuf::MethodDescriptor*> AllMethods() {
  std::vector<const google::protobuf::MethodDescriptor*> out;
  for (const auto* service :
       {google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
            "ptxbench.v1.ClientService"),
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
            "ptxbench.v1.ExecutorService")}) {
    for (int i = 0; i < service->method_count(); ++i) out.push_back(service->method(i));
  }
  return out;
}

std::string Key(const google::protobuf::MethodDescriptor* m) {
  return absl::StrCat(m->service()->name(), ".", m->name());
}

// One call of any RPC (unary or server stream) through the generic API:
// the request goes out, every response is read, the status comes back.
grpc::Status Call(grpc::GenericStub& stub, const google::protobuf::MethodDescriptor* method,
                  const google::protobuf::Message& request, absl::Duration deadline) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  grpc::CompletionQueue cq;
  const std::string path = absl::StrCat("/", method->service()->full_name(), "/", method->name());
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call = stub.PrepareCall(&ctx, path, &cq);
  void* tag;
  bool ok;
  auto step = [&] { return cq.Next(&tag, &ok) && ok; };
  call->StartCall(nullptr);
  step();
  std::string bytes = request.SerializeAsString();
  grpc::Slice slice(bytes);
  grpc::ByteBuffer buffer(&slice, 1);
  call->Write(buffer, nullptr);
  step();
  call->WritesDone(nullptr);
  step();
  grpc::ByteBuffer response;
  do {
    call->Read(&response, nullptr);
  } while (step());
  grpc::Status status;
  call->Finish(&status, nullptr);
  step();
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

class AccessTest : public ServiceFixture {
 protected:
  void SetUp() override {
    ServiceFixture::SetUp();
    for (const std::string& role : kRoles) {
      tokens_[role] = role == "admin" ? admin_token_ : CreateToken(*auth::ParseRole(role), role);
    }
    tokens_["none"] = "";
    tokens_["unknown"] = auth::GenerateToken();
    tokens_["revoked"] = CreateToken(v1::ROLE_ADMIN, "revoked-admin");
    Revoke("revoked-admin");

    // What the calls act on: an experiment with trajectories, an executor of
    // each executor role registered under its own token.
    v1::SubmitExperimentResponse submitted;
    grpc::ClientContext ctx;
    v1::SubmitExperimentRequest submit = SubmitRequest("target");
    grpc::Status status = client_->SubmitExperiment(&ctx, submit, &submitted);
    ASSERT_TRUE(status.ok()) << status.error_message();
    experiment_ = submitted.experiment_id();
    grpc::ClientContext list_ctx;
    v1::ListTrajectoriesRequest list;
    list.set_experiment_id(experiment_);
    v1::ListTrajectoriesResponse trajectories;
    ASSERT_TRUE(client_->ListTrajectories(&list_ctx, list, &trajectories).ok());
    trajectory_ = trajectories.trajectories(0).trajectory_id();
    for (const std::string& role : {"admin", "worker", "gateway"}) {
      executors_[role] = RegisterAs(role, KindFor(role));
    }
  }

  void Revoke(const std::string& name) {
    grpc::ClientContext ctx;
    v1::RevokeTokenRequest request;
    request.set_name(name);
    v1::RevokeTokenResponse response;
    ASSERT_TRUE(client_->RevokeToken(&ctx, request, &response).ok());
  }

  static v1::SubmitExperimentRequest SubmitRequest(const std::string& name) {
    v1::SubmitExperimentRequest r;
    r.set_spec_json(absl::StrCat(
        R"({"name": ")", name,
        R"(", "models": ["m1"], "definitions": ["gemm_n7168_k5120"], "prompt_tags": ["ptxb-no-hint"], "samples": 2, "num_turns": 2, "target_speedup": 1.5})"));
    return r;
  }

  static v1::ExecutorKind KindFor(const std::string& role) {
    return role == "gateway" ? v1::GATEWAY : v1::WORKER;
  }

  std::string RegisterAs(const std::string& caller, v1::ExecutorKind kind) {
    auto stub = ExecutorStub(tokens_[caller]);
    grpc::ClientContext ctx;
    v1::RegisterRequest request;
    request.set_kind(kind);
    request.set_name(caller);
    request.mutable_capabilities()->set_serves_any_model(true);
    if (kind == v1::WORKER) {
      v1::Gpu* gpu = request.mutable_capabilities()->add_gpus();
      gpu->set_sm_arch("sm_90");
      gpu->set_healthy(true);
    }
    v1::RegisterResponse response;
    grpc::Status status = stub->Register(&ctx, request, &response);
    EXPECT_TRUE(status.ok()) << caller << ": " << status.error_message();
    return response.executor_id();
  }

  // A request that does what the RPC is for, so that an allowed call changes
  // what it changes and a refused one visibly does not.
  std::unique_ptr<google::protobuf::Message> RequestFor(const std::string& rpc,
                                                        const std::string& caller) {
    ++unique_;
    if (auto r = ClientRequestFor(rpc, caller)) return r;
    if (auto r = ExecutorRequestFor(rpc, caller)) return r;
    return ExperimentRequestFor(rpc);
  }

  // The client RPCs that need more than an experiment id; null for others.
  std::unique_ptr<google::protobuf::Message> ClientRequestFor(const std::string& rpc,
                                                              const std::string& caller) {
    const int unique = unique_;
    if (rpc == "ClientService.SubmitExperiment") {
      return std::make_unique<v1::SubmitExperimentRequest>(
          SubmitRequest(absl::StrCat("by-", caller, "-", unique)));
    }
    if (rpc == "ClientService.SubmitEval") {
      auto r = std::make_unique<v1::SubmitEvalRequest>();
      r->mutable_eval()->set_definition("gemm_n7168_k5120");
      r->mutable_eval()->set_kernel_source(absl::StrCat("// ", unique, "\n__global__ void k() {}"));
      return r;
    }
    if (rpc == "ClientService.CreateToken") {
      auto r = std::make_unique<v1::CreateTokenRequest>();
      r->set_role(v1::ROLE_READ);
      r->set_name(absl::StrCat("made-by-", caller, "-", unique));
      return r;
    }
    if (rpc == "ClientService.RevokeToken") {
      auto r = std::make_unique<v1::RevokeTokenRequest>();
      r->set_name(absl::StrCat("victim-", unique));
      CreateToken(v1::ROLE_READ, r->name());
      return r;
    }
    if (rpc == "ClientService.RecordStageManifest") {
      auto r = std::make_unique<v1::RecordStageManifestRequest>();
      r->set_manifest_json(nlohmann::json{{"format", "ptxbench.stage.v1"},
                                          {"id", absl::StrCat("st_", unique)},
                                          {"pipeline", "p"},
                                          {"stage", caller},
                                          {"kind", "select"}}
                               .dump());
      return r;
    }
    if (rpc == "ClientService.Drain") {
      auto r = std::make_unique<v1::DrainRequest>();
      r->set_executor_id(executors_["gateway"]);
      return r;
    }
    if (rpc == "ClientService.Cancel") {
      auto r = std::make_unique<v1::CancelRequest>();
      r->set_trajectory_id(trajectory_);
      return r;
    }
    if (rpc == "ClientService.GetTrajectory") {
      auto r = std::make_unique<v1::GetTrajectoryRequest>();
      r->set_trajectory_id(trajectory_);
      return r;
    }
    return nullptr;
  }

  // The executor RPCs, as the caller's own executor; null for others.
  std::unique_ptr<google::protobuf::Message> ExecutorRequestFor(const std::string& rpc,
                                                                const std::string& caller) {
    const std::string own_executor =
        executors_.count(caller) ? executors_[caller] : executors_["worker"];
    if (rpc == "ExecutorService.Register") {
      auto r = std::make_unique<v1::RegisterRequest>();
      r->set_kind(KindFor(caller));
      r->set_name(absl::StrCat("by-", caller));
      return r;
    }
    if (rpc == "ExecutorService.Lease") {
      auto r = std::make_unique<v1::LeaseRequest>();
      r->set_executor_id(own_executor);
      return r;
    }
    if (rpc == "ExecutorService.Heartbeat") {
      auto r = std::make_unique<v1::HeartbeatRequest>();
      r->set_executor_id(own_executor);
      return r;
    }
    if (rpc == "ExecutorService.Complete") {
      auto r = std::make_unique<v1::CompleteRequest>();
      r->set_executor_id(own_executor);
      r->mutable_lease()->set_task_id("tk_1");
      r->mutable_lease()->set_lease_id("ls_not_current");
      r->mutable_llm()->set_text("hello");
      return r;
    }
    if (rpc == "ExecutorService.AgentEval") {  // a lease that is not current: refused
      auto r = std::make_unique<v1::AgentEvalRequest>();
      r->set_executor_id(own_executor);
      r->mutable_lease()->set_task_id("tk_1");
      r->mutable_lease()->set_lease_id("ls_not_current");
      r->set_action_id("a1");
      r->set_kernel_source("__global__ void k() {}");
      return r;
    }
    if (rpc == "ExecutorService.AcquireCallPermit") {
      auto r = std::make_unique<v1::AcquireCallPermitRequest>();
      r->set_executor_id(own_executor);
      r->set_model("m");
      return r;
    }
    if (rpc == "ExecutorService.ReleaseCallPermit") {  // not granted: refused
      auto r = std::make_unique<v1::ReleaseCallPermitRequest>();
      r->set_executor_id(own_executor);
      r->set_permit_id(1);
      return r;
    }
    if (rpc == "ExecutorService.RenewCallPermits") {
      auto r = std::make_unique<v1::RenewCallPermitsRequest>();
      r->set_executor_id(own_executor);
      return r;
    }
    if (rpc == "ExecutorService.Leave") {  // the last RPC: no later call leases
      auto r = std::make_unique<v1::LeaveRequest>();
      r->set_executor_id(own_executor);
      return r;
    }
    return nullptr;
  }

  // The rest take an experiment id (or nothing, which ignores it).
  std::unique_ptr<google::protobuf::Message> ExperimentRequestFor(const std::string& rpc) {
    const auto* method = google::protobuf::DescriptorPool::generated_pool()
                             ->FindServiceByName("ptxbench.v1.ClientService")
                             ->FindMethodByName(
        std::string(absl::StripPrefix(rpc, "ClientService.")));
    EXPECT_NE(method, nullptr) << rpc;
    std::unique_ptr<google::protobuf::Message> r(
        google::protobuf::MessageFactory::generated_factory()
            ->GetPrototype(method->input_type())
            ->New());
    if (const auto* field = r->GetDescriptor()->FindFieldByName("experiment_id")) {
      r->GetReflection()->SetString(r.get(), field, experiment_);
    }
    if (const auto* field = r->GetDescriptor()->FindFieldByName("experiment_ids")) {
      r->GetReflection()->AddString(r.get(), field, experiment_);
    }
    if (const auto* field = r->GetDescriptor()->FindFieldByName("num_turns")) {
      r->GetReflection()->SetInt32(r.get(), field, 3);
    }
    return r;
  }

  // What any change would show: rows of every table a call could touch.
  std::string Fingerprint() {
    auto db = OpenReadOnly(dir_ + "/ptxbench.db");
    EXPECT_TRUE(db.ok());
    std::string out;
    for (const char* sql :
         {"SELECT count(*) FROM experiments", "SELECT count(*) FROM trajectories",
          "SELECT group_concat(state) FROM (SELECT state FROM trajectories ORDER BY rowid)",
          "SELECT group_concat(state || ':' || lease_id) FROM (SELECT * FROM tasks ORDER BY rowid)",
          "SELECT count(*) FROM tokens", "SELECT count(*) FROM tokens WHERE revoked_ms > 0",
          "SELECT group_concat(id || ':' || draining || ':' || owner) FROM executors",
          "SELECT max(num_turns) FROM experiments"}) {
      auto s = (*db)->Prepare(sql);
      EXPECT_TRUE(s.ok());
      absl::StatusOr<bool> row = s->Step();
      absl::StrAppend(&out, row.ok() && *row ? s->ColumnText(0) : "?", "|");
    }
    return out;
  }

  std::map<std::string, std::string> tokens_;     // caller -> token
  std::map<std::string, std::string> executors_;  // role -> its executor id
  std::string experiment_, trajectory_;
  int unique_ = 0;  // makes each request's names its own
};

TEST_F(AccessTest, EveryRpcIsInBothTables) {
  std::set<std::string> in_table;
  for (const RpcAccess& rpc : AccessTable()) {
    in_table.insert(absl::StrCat(rpc.service, ".", rpc.method));
  }
  for (const auto* method : AllMethods()) {
    EXPECT_TRUE(Expected().count(Key(method))) << Key(method) << " has no expected outcome here";
    EXPECT_TRUE(in_table.count(Key(method))) << Key(method) << " is not in AccessTable()";
  }
  EXPECT_EQ(in_table.size(), AllMethods().size());
  for (const RpcAccess& rpc : AccessTable()) {
    std::set<std::string> roles;
    for (v1::Role r : rpc.roles) roles.insert(auth::RoleName(r));
    if (rpc.roles.empty()) roles = {kRoles.begin(), kRoles.end()};
    EXPECT_EQ(roles, Expected().at(absl::StrCat(rpc.service, ".", rpc.method))) << rpc.method;
  }
}

TEST_F(AccessTest, EveryRpcWithEveryKindOfToken) {
  std::vector<std::string> callers = {"none", "unknown", "revoked"};
  callers.insert(callers.end(), kRoles.begin(), kRoles.end());
  int allowed = 0, refused = 0;
  for (const auto* method : AllMethods()) {
    const std::string rpc = Key(method);
    // Drain last among the admin's calls would leave the gateway draining;
    // it changes nothing the other calls look at.
    for (const std::string& caller : callers) {
      SCOPED_TRACE(absl::StrCat(rpc, " called with ", caller, " token"));
      grpc::GenericStub stub(auth::NewChannel(address_, {tokens_[caller], "", "", ""}));
      std::unique_ptr<google::protobuf::Message> request = RequestFor(rpc, caller);
      const std::string before = Fingerprint();
      const absl::Duration deadline =
          method->server_streaming() ? absl::Milliseconds(500) : absl::Seconds(10);
      grpc::Status status = Call(stub, method, *request, deadline);
      const bool may = Expected().at(rpc).count(caller) > 0;
      if (may) {
        ++allowed;
        EXPECT_NE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
        EXPECT_NE(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << status.error_message();
        continue;
      }
      ++refused;
      if (caller == "none" || caller == "unknown" || caller == "revoked") {
        EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
      } else {
        EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << status.error_message();
        EXPECT_THAT(status.error_message(), HasSubstr("needs a token of role"));
        EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat("has role ", caller)));
      }
      EXPECT_EQ(Fingerprint(), before) << "a refused call changed something";
      EXPECT_THAT(status.error_message(), ::testing::Not(HasSubstr(tokens_[caller].empty()
                                                                        ? "\x01"
                                                                        : tokens_[caller])));
    }
  }
  EXPECT_EQ(allowed + refused, static_cast<int>(AllMethods().size() * callers.size()));
  EXPECT_GT(refused, allowed);
}

TEST_F(AccessTest, ExecutorTokensRegisterOnlyTheirKind) {
  auto worker = ExecutorStub(tokens_["worker"]);
  grpc::ClientContext ctx;
  v1::RegisterRequest request;
  request.set_kind(v1::GATEWAY);
  v1::RegisterResponse response;
  grpc::Status status = worker->Register(&ctx, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("may only register a worker"));
}

TEST_F(AccessTest, AnExecutorActsOnlyAsItselfOnItsOwnLeases) {
  auto gateway = ExecutorStub(tokens_["gateway"]);
  const std::string holder = executors_["gateway"];
  v1::LeaseResponse leased;
  {
    grpc::ClientContext ctx;
    v1::LeaseRequest request;
    request.set_executor_id(holder);
    ASSERT_TRUE(gateway->Lease(&ctx, request, &leased).ok());
    ASSERT_TRUE(leased.has_task());
  }
  const v1::LeaseRef lease = leased.task().lease();
  // Another gateway token, with an executor of its own.
  tokens_["other"] = CreateToken(v1::ROLE_GATEWAY, "other-gateway");
  executors_["other"] = RegisterAs("other", v1::GATEWAY);
  auto other = ExecutorStub(tokens_["other"]);
  const std::string before = Fingerprint();

  auto complete = [&](const std::string& as) {
    grpc::ClientContext ctx;
    v1::CompleteRequest request;
    request.set_executor_id(as);
    *request.mutable_lease() = lease;
    request.mutable_llm()->set_text("forged answer");
    v1::CompleteResponse response;
    return other->Complete(&ctx, request, &response);
  };
  grpc::Status impersonating = complete(holder);
  EXPECT_EQ(impersonating.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(impersonating.error_message(), HasSubstr("registered under another token"));
  grpc::Status not_its_lease = complete(executors_["other"]);
  EXPECT_EQ(not_its_lease.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(not_its_lease.error_message(), HasSubstr("held by another executor"));
  // Each call made as the holder with the other token is refused.
  auto as_holder = [&](auto call, auto request, auto response) {
    grpc::ClientContext ctx;
    request.set_executor_id(holder);
    return ((*other).*call)(&ctx, request, &response).error_code();
  };
  v1::HeartbeatRequest heartbeat;
  *heartbeat.add_leases() = lease;
  EXPECT_EQ(as_holder(&v1::ExecutorService::Stub::Heartbeat, heartbeat, v1::HeartbeatResponse()),
            grpc::StatusCode::PERMISSION_DENIED);
  {
    // Its own heartbeat naming the other's lease extends nothing.
    grpc::ClientContext ctx;
    v1::HeartbeatRequest request;
    request.set_executor_id(executors_["other"]);
    *request.add_leases() = lease;
    v1::HeartbeatResponse response;
    ASSERT_TRUE(other->Heartbeat(&ctx, request, &response).ok());
    ASSERT_EQ(response.revoked_size(), 1);
    EXPECT_EQ(response.revoked(0).lease_id(), lease.lease_id());
  }
  EXPECT_EQ(as_holder(&v1::ExecutorService::Stub::Lease, v1::LeaseRequest(), v1::LeaseResponse()),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::RegisterRequest reregister;
  reregister.set_kind(v1::GATEWAY);
  EXPECT_EQ(as_holder(&v1::ExecutorService::Stub::Register, reregister, v1::RegisterResponse()),
            grpc::StatusCode::PERMISSION_DENIED);
  // Nor can it make the holder leave, which would hand its lease back.
  EXPECT_EQ(as_holder(&v1::ExecutorService::Stub::Leave, v1::LeaveRequest(), v1::LeaveResponse()),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Fingerprint(), before) << "a refused report changed something";

  // The holder's own report is taken.
  grpc::ClientContext ctx;
  v1::CompleteRequest request;
  request.set_executor_id(holder);
  *request.mutable_lease() = lease;
  request.mutable_llm()->set_text("```cuda\n__global__ void k() {}\n```");
  v1::CompleteResponse response;
  grpc::Status own = gateway->Complete(&ctx, request, &response);
  EXPECT_TRUE(own.ok()) << own.error_message();
  EXPECT_NE(Fingerprint(), before);
}

TEST_F(AccessTest, ALongPollParkedBeforeRevocationGetsNoTask) {
  // The worker parks a long poll while no evaluation is ready.
  auto worker = ExecutorStub(tokens_["worker"]);
  v1::LeaseResponse parked_response;
  grpc::Status parked_status;
  std::thread parked([&] {
    grpc::ClientContext ctx;
    v1::LeaseRequest request;
    request.set_executor_id(executors_["worker"]);
    request.set_wait_ms(1500);
    parked_status = worker->Lease(&ctx, request, &parked_response);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Revoke("worker");
  // Now an evaluation becomes ready: the gateway answers an LLM step.
  auto gateway = ExecutorStub(tokens_["gateway"]);
  grpc::ClientContext lease_ctx;
  v1::LeaseRequest lease;
  lease.set_executor_id(executors_["gateway"]);
  v1::LeaseResponse leased;
  ASSERT_TRUE(gateway->Lease(&lease_ctx, lease, &leased).ok());
  ASSERT_TRUE(leased.has_task());
  grpc::ClientContext complete_ctx;
  v1::CompleteRequest complete;
  complete.set_executor_id(executors_["gateway"]);
  *complete.mutable_lease() = leased.task().lease();
  complete.mutable_llm()->set_text("```cuda\n__global__ void k() {}\n```");
  v1::CompleteResponse completed;
  ASSERT_TRUE(gateway->Complete(&complete_ctx, complete, &completed).ok());
  parked.join();
  EXPECT_TRUE(parked_status.ok()) << parked_status.error_message();
  EXPECT_FALSE(parked_response.has_task()) << "a revoked worker was given a task";
  // Its next call is refused.
  grpc::ClientContext ctx;
  v1::LeaseRequest again;
  again.set_executor_id(executors_["worker"]);
  v1::LeaseResponse response;
  EXPECT_EQ(worker->Lease(&ctx, again, &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AccessTest, TheDocsTableIsThisTable) {
  absl::StatusOr<std::string> doc = ReadFile(DataDir() + "/docs/SECURITY.md");
  ASSERT_TRUE(doc.ok()) << doc.status();
  std::map<std::string, std::set<std::string>> documented;
  std::vector<std::string> header;
  for (absl::string_view line : absl::StrSplit(*doc, '\n')) {
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() < 3) continue;
    for (std::string& c : cells) c = std::string(absl::StripAsciiWhitespace(c));
    if (cells[1] == "RPC") header = cells;
    if (header.empty() || !absl::StartsWith(cells[1], "`")) continue;
    std::string rpc(absl::StripSuffix(absl::StripPrefix(cells[1], "`"), "`"));
    std::set<std::string>& roles = documented[rpc];
    for (size_t i = 2; i + 1 < cells.size() && i < header.size(); ++i) {
      if (cells[i] == "yes") roles.insert(header[i]);
    }
  }
  EXPECT_EQ(documented, Expected());
}

}  // namespace
}  // namespace ptxbench::scheduler
