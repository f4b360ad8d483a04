#ifndef PTXBENCH_SCHEDULER_API_SERVICE_H_
#define PTXBENCH_SCHEDULER_API_SERVICE_H_

// Room scheduler/api/: the gRPC edge. Owns the services (this header), who
// may call what (access.h), the long reads and watches (long_reads.cc,
// watch.cc), tokens at start-up (tokens.h). May include every other room;
// none includes it. main.cc, above all rooms, wires them together.
//
// The gRPC edge of the scheduler (callback API). These classes check who
// calls (scheduler/api/access.h: every handler's first step) and convert proto
// <-> domain calls and absl::Status -> grpc::Status; the logic lives in
// Dispatcher/Core (writes) and Reader (queries).

#include <memory>

#include "experiment_spec/spec.h"
#include "prompts/prompts.h"
#include "ptxbench/v1/client.grpc.pb.h"
#include "ptxbench/v1/executor.grpc.pb.h"
#include "scheduler/api/access.h"
#include "scheduler/read/reader.h"
#include "scheduler/state/dispatcher.h"
#include "scheduler/state/fleet_limits.h"
#include "workloads/registry.h"

namespace ptxbench::scheduler {

class ExecutorServiceImpl final : public ptxbench::v1::ExecutorService::CallbackService {
 public:
  // None is owned; each must outlive the service. The call permits
  // (`limits`) are answered here, off the writer thread: they are not
  // durable (fleet_limits.h).
  ExecutorServiceImpl(Dispatcher* dispatcher, const Access* access, FleetLimits* limits)
      : dispatcher_(dispatcher), access_(access), limits_(limits) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const ptxbench::v1::RegisterRequest* request,
                                     ptxbench::v1::RegisterResponse* response) override;
  grpc::ServerUnaryReactor* Lease(grpc::CallbackServerContext* ctx,
                                  const ptxbench::v1::LeaseRequest* request,
                                  ptxbench::v1::LeaseResponse* response) override;
  grpc::ServerUnaryReactor* AgentEval(grpc::CallbackServerContext* ctx,
                                      const ptxbench::v1::AgentEvalRequest* request,
                                      ptxbench::v1::AgentEvalResponse* response) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx,
                                      const ptxbench::v1::HeartbeatRequest* request,
                                      ptxbench::v1::HeartbeatResponse* response) override;
  grpc::ServerUnaryReactor* Complete(grpc::CallbackServerContext* ctx,
                                     const ptxbench::v1::CompleteRequest* request,
                                     ptxbench::v1::CompleteResponse* response) override;
  grpc::ServerUnaryReactor* Leave(grpc::CallbackServerContext* ctx,
                                  const ptxbench::v1::LeaveRequest* request,
                                  ptxbench::v1::LeaveResponse* response) override;
  grpc::ServerUnaryReactor* AcquireCallPermit(
      grpc::CallbackServerContext* ctx, const ptxbench::v1::AcquireCallPermitRequest* request,
      ptxbench::v1::AcquireCallPermitResponse* response) override;
  grpc::ServerUnaryReactor* ReleaseCallPermit(
      grpc::CallbackServerContext* ctx, const ptxbench::v1::ReleaseCallPermitRequest* request,
      ptxbench::v1::ReleaseCallPermitResponse* response) override;
  grpc::ServerUnaryReactor* RenewCallPermits(
      grpc::CallbackServerContext* ctx, const ptxbench::v1::RenewCallPermitsRequest* request,
      ptxbench::v1::RenewCallPermitsResponse* response) override;

 private:
  Dispatcher* dispatcher_;
  const Access* access_;
  FleetLimits* limits_;
};

// What the client service needs besides the dispatcher. Not owned.
struct ClientServiceDeps {
  Dispatcher* dispatcher = nullptr;
  Reader* reader = nullptr;
  const Access* access = nullptr;
  // Told of every token created and revoked.
  auth::Authenticator* authenticator = nullptr;
  const workloads::DefinitionRegistry* definitions = nullptr;
  const prompts::PromptRegistry* prompts = nullptr;
  experiment_spec::SpecLimits limits;
};

// Admission for the long reads (reports, exports): each holds a thread and a
// database connection while it runs, so there is a fixed number of them.
class LongReadSlots {
 public:
  // Holds one slot while alive, if one was free.
  class Slot {
   public:
    explicit Slot(LongReadSlots* slots);
    ~Slot();
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    // RESOURCE_EXHAUSTED when no slot was free.
    absl::Status status() const;
    // Gives the slot back before the holder is destroyed: a stream's reactor
    // outlives the end its client sees, and a client that reads again at
    // once must find its slot free.
    void Release();

   private:
    LongReadSlots* slots_;  // null once released, or when none was free
    bool granted_ = false;
  };

 private:
  absl::Mutex mu_;
  int in_use_ ABSL_GUARDED_BY(mu_) = 0;
};

class ClientServiceImpl final : public ptxbench::v1::ClientService::CallbackService {
 public:
  explicit ClientServiceImpl(ClientServiceDeps deps) : deps_(deps) {}

  grpc::ServerUnaryReactor* SubmitExperiment(
      grpc::CallbackServerContext* ctx, const ptxbench::v1::SubmitExperimentRequest* request,
      ptxbench::v1::SubmitExperimentResponse* response) override;
  grpc::ServerUnaryReactor* SubmitEval(grpc::CallbackServerContext* ctx,
                                       const ptxbench::v1::SubmitEvalRequest* request,
                                       ptxbench::v1::SubmitEvalResponse* response) override;
  grpc::ServerUnaryReactor* GetExperiment(grpc::CallbackServerContext* ctx,
                                          const ptxbench::v1::GetExperimentRequest* request,
                                          ptxbench::v1::GetExperimentResponse* response) override;
  grpc::ServerUnaryReactor* ListExperiments(
      grpc::CallbackServerContext* ctx, const ptxbench::v1::ListExperimentsRequest* request,
      ptxbench::v1::ListExperimentsResponse* response) override;
  grpc::ServerUnaryReactor* ListTrajectories(
      grpc::CallbackServerContext* ctx, const ptxbench::v1::ListTrajectoriesRequest* request,
      ptxbench::v1::ListTrajectoriesResponse* response) override;
  grpc::ServerUnaryReactor* GetTrajectory(grpc::CallbackServerContext* ctx,
                                          const ptxbench::v1::GetTrajectoryRequest* request,
                                          ptxbench::v1::GetTrajectoryResponse* response) override;
  // long_reads.cc
  grpc::ServerWriteReactor<ptxbench::v1::ReadTrajectoriesResponse>* ReadTrajectories(
      grpc::CallbackServerContext* ctx,
      const ptxbench::v1::ReadTrajectoriesRequest* request) override;
  grpc::ServerUnaryReactor* GetReport(grpc::CallbackServerContext* ctx,
                                      const ptxbench::v1::ReportRequest* request,
                                      ptxbench::v1::ReportResponse* response) override;
  grpc::ServerUnaryReactor* GetDefinitions(grpc::CallbackServerContext* ctx,
                                           const ptxbench::v1::GetDefinitionsRequest* request,
                                           ptxbench::v1::GetDefinitionsResponse* response) override;
  grpc::ServerWriteReactor<ptxbench::v1::WatchExperimentResponse>* WatchExperiment(
      grpc::CallbackServerContext* ctx,
      const ptxbench::v1::WatchExperimentRequest* request) override;
  grpc::ServerUnaryReactor* Cancel(grpc::CallbackServerContext* ctx,
                                   const ptxbench::v1::CancelRequest* request,
                                   ptxbench::v1::CancelResponse* response) override;
  grpc::ServerUnaryReactor* Retry(grpc::CallbackServerContext* ctx,
                                  const ptxbench::v1::RetryRequest* request,
                                  ptxbench::v1::RetryResponse* response) override;
  grpc::ServerUnaryReactor* Extend(grpc::CallbackServerContext* ctx,
                                   const ptxbench::v1::ExtendRequest* request,
                                   ptxbench::v1::ExtendResponse* response) override;
  grpc::ServerUnaryReactor* ListExecutors(grpc::CallbackServerContext* ctx,
                                          const ptxbench::v1::ListExecutorsRequest* request,
                                          ptxbench::v1::ListExecutorsResponse* response) override;
  grpc::ServerUnaryReactor* Drain(grpc::CallbackServerContext* ctx,
                                  const ptxbench::v1::DrainRequest* request,
                                  ptxbench::v1::DrainResponse* response) override;
  // tokens.cc
  grpc::ServerUnaryReactor* WhoAmI(grpc::CallbackServerContext* ctx,
                                   const ptxbench::v1::WhoAmIRequest* request,
                                   ptxbench::v1::WhoAmIResponse* response) override;
  grpc::ServerUnaryReactor* CreateToken(grpc::CallbackServerContext* ctx,
                                        const ptxbench::v1::CreateTokenRequest* request,
                                        ptxbench::v1::CreateTokenResponse* response) override;
  grpc::ServerUnaryReactor* ListTokens(grpc::CallbackServerContext* ctx,
                                       const ptxbench::v1::ListTokensRequest* request,
                                       ptxbench::v1::ListTokensResponse* response) override;
  grpc::ServerUnaryReactor* RevokeToken(grpc::CallbackServerContext* ctx,
                                        const ptxbench::v1::RevokeTokenRequest* request,
                                        ptxbench::v1::RevokeTokenResponse* response) override;
  // stage_manifests.cc
  grpc::ServerUnaryReactor* RecordStageManifest(
      grpc::CallbackServerContext* ctx, const ptxbench::v1::RecordStageManifestRequest* request,
      ptxbench::v1::RecordStageManifestResponse* response) override;
  grpc::ServerUnaryReactor* ListStageManifests(
      grpc::CallbackServerContext* ctx, const ptxbench::v1::ListStageManifestsRequest* request,
      ptxbench::v1::ListStageManifestsResponse* response) override;

 private:
  // Why the caller may not call `method`, or OK (Access::Check).
  absl::Status Deny(const grpc::CallbackServerContext* ctx, absl::string_view method) const {
    return deps_.access->Check(ctx, method).status();
  }

  absl::StatusOr<ptxbench::v1::GetDefinitionsResponse> Definitions(
      const ptxbench::v1::GetDefinitionsRequest& request) const;

  ClientServiceDeps deps_;
  LongReadSlots long_reads_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_API_SERVICE_H_
