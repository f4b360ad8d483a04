#ifndef PTXBENCH_DASHBOARD_SCHEDULER_CALLS_H_
#define PTXBENCH_DASHBOARD_SCHEDULER_CALLS_H_

// The dashboard's calls to the scheduler's ClientService, each made on behalf
// of one signed-in user: the user's token goes along as the metadata
// `authorization: Bearer <token>`, exactly as the CLI sends it, so the
// scheduler's per-RPC role checks decide what the dashboard may show and do.
// The dashboard itself holds no authority of its own.
//
// Thread-safe (a gRPC stub is).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/grpc_status.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "ptxbench/v1/client.grpc.pb.h"

namespace ptxbench::dashboard {

class SchedulerCalls {
 public:
  using Stub = ptxbench::v1::ClientService::Stub;

  // `channel` reaches the ClientService (in the scheduler, its in-process
  // channel). Every call gives up after `deadline`.
  SchedulerCalls(std::shared_ptr<grpc::Channel> channel, absl::Duration deadline)
      : stub_(ptxbench::v1::ClientService::NewStub(std::move(channel))), deadline_(deadline) {}

  // One unary call with `token`: Call(token, &Stub::GetExperiment, request).
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(const std::string& token,
                                grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                                const Request& request) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
    context.AddMetadata("authorization", "Bearer " + token);
    Response response;
    grpc::Status status = (stub_.get()->*method)(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

 private:
  std::unique_ptr<Stub> stub_;
  const absl::Duration deadline_;
};

}  // namespace ptxbench::dashboard

#endif  // PTXBENCH_DASHBOARD_SCHEDULER_CALLS_H_
