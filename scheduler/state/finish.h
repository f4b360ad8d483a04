#ifndef PTXBENCH_SCHEDULER_STATE_FINISH_H_
#define PTXBENCH_SCHEDULER_STATE_FINISH_H_

// How the service's handlers finish their calls: after a dispatcher
// operation committed, at once from a value, or refused before doing
// anything. Internal to the scheduler's services.

#include <functional>
#include <utility>

#include "absl/status/statusor.h"
#include "common/grpc_status.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "scheduler/state/dispatcher.h"

namespace ptxbench::scheduler {

// Runs `fn` on the dispatcher; `fill` copies its value into the response;
// the RPC finishes after the transition committed.
template <typename T, typename Response>
grpc::ServerUnaryReactor* Dispatch(grpc::CallbackServerContext* ctx, Dispatcher* dispatcher,
                                   Response* response, std::function<absl::StatusOr<T>(Core&)> fn,
                                   std::function<void(T&, Response*)> fill) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  dispatcher->Run<T>(std::move(fn), [reactor, response, fill](absl::StatusOr<T> result) {
    if (result.ok()) fill(*result, response);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

// Dispatch for a change made in parts (Dispatcher::RunInParts): `fill` gets
// how many trajectories it changed.
template <typename Response>
grpc::ServerUnaryReactor* DispatchInParts(
    grpc::CallbackServerContext* ctx, Dispatcher* dispatcher, Response* response,
    std::function<absl::Status(Core&, int, WritePart&)> part,
    std::function<void(int64_t, Response*)> fill) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  dispatcher->RunInParts(std::move(part),
                         [reactor, response, fill](absl::StatusOr<int64_t> changed) {
                           if (changed.ok()) fill(*changed, response);
                           reactor->Finish(ToGrpcStatus(changed.status()));
                         });
  return reactor;
}

// Answers at once from a query's result.
template <typename T, typename Response>
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* ctx, absl::StatusOr<T> result,
                                 Response* response, std::function<void(T&, Response*)> fill) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (result.ok()) fill(*result, response);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

// Finishes a unary call with `status` (a refusal: nothing was done).
inline grpc::ServerUnaryReactor* Refuse(grpc::CallbackServerContext* ctx,
                                        const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// A server stream refused before it wrote anything.
template <typename Response>
class RefusedStream final : public grpc::ServerWriteReactor<Response> {
 public:
  explicit RefusedStream(const absl::Status& status) { this->Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STATE_FINISH_H_
