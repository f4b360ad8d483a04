#ifndef PTXBENCH_SCHEDULER_API_SERVICE_FIXTURE_H_
#define PTXBENCH_SCHEDULER_API_SERVICE_FIXTURE_H_

// Test-only: the scheduler's real services on an in-process server at
// 127.0.0.1:0, with tokens as the scheduler binary sets them up (the data
// directory's admin token, every valid token in memory). Stubs come with the
// token they carry.

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "auth/channel.h"
#include "auth/token.h"
#include "common/clock.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "scheduler/api/access.h"
#include "scheduler/api/service.h"
#include "scheduler/api/tokens.h"
#include "scheduler/store/schema.h"

namespace ptxbench::scheduler {

class ServiceFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/svc_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const std::string path = dir_ + "/ptxbench.db";
    auto db = OpenSchedulerDatabase(path);
    ASSERT_TRUE(db.ok()) << db.status();
    TokenStore tokens(db->get());
    ASSERT_TRUE(EnsureAdminToken(tokens, dir_, absl::Now()).ok());
    ASSERT_TRUE(LoadTokens(tokens, authenticator_).ok());
    absl::StatusOr<std::string> admin = auth::ReadTokenFile(dir_ + "/" + auth::kAdminTokenFile);
    ASSERT_TRUE(admin.ok()) << admin.status();
    admin_token_ = *admin;

    DispatcherOptions options;
    options.core.lease_ttl = absl::Seconds(30);
    dispatcher_ = std::make_unique<Dispatcher>(*std::move(db), Clock::Real(), options);
    ASSERT_TRUE(dispatcher_->Start().ok());
    auto read_db = OpenReadOnly(path);
    ASSERT_TRUE(read_db.ok());
    reader_ = std::make_unique<Reader>(*std::move(read_db));
    auto defs = workloads::DefinitionRegistry::Load({});
    ASSERT_TRUE(defs.ok()) << defs.status();
    definitions_ = *std::move(defs);
    auto prompts = prompts::PromptRegistry::Load(prompts::PromptRegistry::BundledRoot());
    ASSERT_TRUE(prompts.ok()) << prompts.status();
    prompts_ = *std::move(prompts);

    access_ = std::make_unique<Access>(&authenticator_);
    fleet_limits_ = std::make_unique<FleetLimits>(FleetLimits::Options(), Clock::Real());
    executor_service_ = std::make_unique<ExecutorServiceImpl>(dispatcher_.get(), access_.get(),
                                                              fleet_limits_.get());
    ClientServiceDeps deps;
    deps.dispatcher = dispatcher_.get();
    deps.reader = reader_.get();
    deps.access = access_.get();
    deps.authenticator = &authenticator_;
    deps.definitions = definitions_.get();
    deps.prompts = prompts_.get();
    client_service_ = std::make_unique<ClientServiceImpl>(deps);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(executor_service_.get());
    builder.RegisterService(client_service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(port, 0);
    address_ = absl::StrCat("127.0.0.1:", port);
    client_ = ClientStub(admin_token_);
    executor_ = ExecutorStub(admin_token_);
  }

  void TearDown() override {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    dispatcher_->Stop();
  }

  // Stubs whose calls carry `token` ("" for none).
  std::unique_ptr<ptxbench::v1::ClientService::Stub> ClientStub(const std::string& token) {
    return ptxbench::v1::ClientService::NewStub(auth::NewChannel(address_, {token, "", "", ""}));
  }
  std::unique_ptr<ptxbench::v1::ExecutorService::Stub> ExecutorStub(const std::string& token) {
    return ptxbench::v1::ExecutorService::NewStub(
        auth::NewChannel(address_, {token, "", "", ""}));
  }

  // A new token of `role` made through CreateToken with the admin token.
  std::string CreateToken(ptxbench::v1::Role role, const std::string& name) {
    grpc::ClientContext ctx;
    ptxbench::v1::CreateTokenRequest request;
    request.set_role(role);
    request.set_name(name);
    ptxbench::v1::CreateTokenResponse response;
    grpc::Status status = client_->CreateToken(&ctx, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.token();
  }

  std::string dir_;
  std::string address_;
  std::string admin_token_;
  auth::Authenticator authenticator_;
  std::unique_ptr<Access> access_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<Reader> reader_;
  std::unique_ptr<workloads::DefinitionRegistry> definitions_;
  std::unique_ptr<prompts::PromptRegistry> prompts_;
  std::unique_ptr<FleetLimits> fleet_limits_;
  std::unique_ptr<ExecutorServiceImpl> executor_service_;
  std::unique_ptr<ClientServiceImpl> client_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<ptxbench::v1::ClientService::Stub> client_;
  std::unique_ptr<ptxbench::v1::ExecutorService::Stub> executor_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_API_SERVICE_FIXTURE_H_
