#include "cli/client/client.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "auth/channel.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "google/protobuf/arena.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/channel_arguments.h"

namespace ptxbench::cli {

namespace {

// A CLI's connection is short-lived: retry connecting quickly (gRPC's default
// backoff starts at 1 s and grows), so that `up` sees a fresh scheduler soon.
// GRPC_ARG_MIN_RECONNECT_BACKOFF_MS stays at its default: gRPC also uses it
// as the connect (handshake) timeout.
std::shared_ptr<grpc::Channel> NewCliChannel(const std::string& address,
                                             const auth::ChannelSecurity& security) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // As large as the scheduler sends (one turn of a trajectory can be large).
  args.SetMaxReceiveMessageSize(64 << 20);
  return auth::NewChannel(address, security, args);
}

}  // namespace

SchedulerClient::SchedulerClient(std::string address, const auth::ChannelSecurity& security,
                                 absl::Duration timeout)
    : address_(std::move(address)),
      timeout_(timeout),
      tls_(security.tls()),
      channel_(NewCliChannel(address_, security)),
      stub_(v1::ClientService::NewStub(channel_)) {}

std::string SchedulerClient::UnreachableMessage(const std::string& address) {
  return absl::StrCat("cannot reach scheduler at ", address,
                      " (is it running? start one with 'ptxbench up')");
}

absl::Status SchedulerClient::Convert(const grpc::Status& status) const {
  if (status.ok()) return absl::OkStatus();
  // A channel that never got ready means nobody answered at the address; a
  // ready channel means the scheduler itself said UNAVAILABLE / too slow.
  const bool connected = channel_->GetState(false) == GRPC_CHANNEL_READY;
  if (!connected && (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                     status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)) {
    // A TLS port answers a plaintext client by closing the connection, and
    // a plaintext port a TLS one: unlike a refused connection, that is
    // somebody listening who will not talk this way.
    if (absl::StrContains(status.error_message(), "Connection refused")) {
      return absl::UnavailableError(UnreachableMessage(address_));
    }
    return absl::UnavailableError(absl::StrCat(
        UnreachableMessage(address_), tls_ ? "; it may not serve TLS: leave out --tls-ca"
                                           : "; if it serves TLS, pass --tls-ca FILE"));
  }
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
      status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    // One line that says which: no or an unknown token, or the role needed.
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat(status.error_code() == grpc::StatusCode::UNAUTHENTICATED
                                         ? "UNAUTHENTICATED: "
                                         : "PERMISSION_DENIED: ",
                                     status.error_message()));
  }
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::DeadlineExceededError(
        absl::StrCat("scheduler at ", address_, " did not answer within ",
                     absl::FormatDuration(timeout_), " (raise it with --timeout SECONDS)"));
  }
  if (status.error_message().empty()) {
    return absl::Status(
        static_cast<absl::StatusCode>(status.error_code()),
        absl::StrCat("the scheduler at ", address_, " answered ",
                     absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()))));
  }
  return FromGrpcStatus(status);
}

template <typename Response, typename Call>
absl::StatusOr<Response> SchedulerClient::Unary(const Call& call) {
  return UnaryWithDeadline<Response>(call, absl::Now() + timeout_, /*wait_for_ready=*/false);
}

template <typename Response, typename Call>
absl::StatusOr<Response> SchedulerClient::UnaryWithDeadline(const Call& call, absl::Time deadline,
                                                            bool wait_for_ready) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(deadline));
  context.set_wait_for_ready(wait_for_ready);
  Response response;
  grpc::Status status = call(&context, &response);
  if (!status.ok()) return Convert(status);
  return response;
}

absl::StatusOr<v1::SubmitExperimentResponse> SchedulerClient::SubmitExperiment(
    const v1::SubmitExperimentRequest& request) {
  return Unary<v1::SubmitExperimentResponse>(
      [&](auto* ctx, auto* resp) { return stub_->SubmitExperiment(ctx, request, resp); });
}

absl::StatusOr<v1::SubmitEvalResponse> SchedulerClient::SubmitEval(
    const v1::SubmitEvalRequest& request) {
  return Unary<v1::SubmitEvalResponse>(
      [&](auto* ctx, auto* resp) { return stub_->SubmitEval(ctx, request, resp); });
}

absl::StatusOr<v1::GetExperimentResponse> SchedulerClient::GetExperiment(
    const std::string& experiment_id) {
  v1::GetExperimentRequest request;
  request.set_experiment_id(experiment_id);
  return Unary<v1::GetExperimentResponse>(
      [&](auto* ctx, auto* resp) { return stub_->GetExperiment(ctx, request, resp); });
}

absl::StatusOr<v1::ListExperimentsResponse> SchedulerClient::ListExperiments() {
  v1::ListExperimentsRequest request;
  return Unary<v1::ListExperimentsResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListExperiments(ctx, request, resp); });
}

absl::Status SchedulerClient::Probe(absl::Duration wait) {
  // A waiting call also drives the connection attempt: the synchronous API
  // polls for connect completion only while a call is in flight.
  v1::WhoAmIRequest request;
  return UnaryWithDeadline<v1::WhoAmIResponse>(
             [&](auto* ctx, auto* resp) { return stub_->WhoAmI(ctx, request, resp); },
             absl::Now() + wait, /*wait_for_ready=*/true)
      .status();
}

absl::StatusOr<v1::ListTrajectoriesResponse> SchedulerClient::ListTrajectories(
    const v1::ListTrajectoriesRequest& request) {
  return Unary<v1::ListTrajectoriesResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListTrajectories(ctx, request, resp); });
}

absl::StatusOr<v1::GetTrajectoryResponse> SchedulerClient::GetTrajectory(
    const std::string& trajectory_id) {
  v1::GetTrajectoryRequest request;
  request.set_trajectory_id(trajectory_id);
  return Unary<v1::GetTrajectoryResponse>(
      [&](auto* ctx, auto* resp) { return stub_->GetTrajectory(ctx, request, resp); });
}

absl::StatusOr<v1::CancelResponse> SchedulerClient::Cancel(const v1::CancelRequest& request) {
  return Unary<v1::CancelResponse>(
      [&](auto* ctx, auto* resp) { return stub_->Cancel(ctx, request, resp); });
}

absl::StatusOr<v1::RetryResponse> SchedulerClient::Retry(const v1::RetryRequest& request) {
  return Unary<v1::RetryResponse>(
      [&](auto* ctx, auto* resp) { return stub_->Retry(ctx, request, resp); });
}

absl::StatusOr<v1::ExtendResponse> SchedulerClient::Extend(const v1::ExtendRequest& request) {
  return Unary<v1::ExtendResponse>(
      [&](auto* ctx, auto* resp) { return stub_->Extend(ctx, request, resp); });
}

absl::StatusOr<v1::ListExecutorsResponse> SchedulerClient::ListExecutors() {
  v1::ListExecutorsRequest request;
  return Unary<v1::ListExecutorsResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListExecutors(ctx, request, resp); });
}

absl::StatusOr<v1::DrainResponse> SchedulerClient::Drain(const std::string& executor_id) {
  v1::DrainRequest request;
  request.set_executor_id(executor_id);
  return Unary<v1::DrainResponse>(
      [&](auto* ctx, auto* resp) { return stub_->Drain(ctx, request, resp); });
}

absl::StatusOr<v1::WhoAmIResponse> SchedulerClient::WhoAmI() {
  v1::WhoAmIRequest request;
  return Unary<v1::WhoAmIResponse>(
      [&](auto* ctx, auto* resp) { return stub_->WhoAmI(ctx, request, resp); });
}

absl::StatusOr<v1::CreateTokenResponse> SchedulerClient::CreateToken(
    const v1::CreateTokenRequest& request) {
  return Unary<v1::CreateTokenResponse>(
      [&](auto* ctx, auto* resp) { return stub_->CreateToken(ctx, request, resp); });
}

absl::StatusOr<v1::ListTokensResponse> SchedulerClient::ListTokens() {
  v1::ListTokensRequest request;
  return Unary<v1::ListTokensResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListTokens(ctx, request, resp); });
}

absl::StatusOr<v1::RevokeTokenResponse> SchedulerClient::RevokeToken(const std::string& name) {
  v1::RevokeTokenRequest request;
  request.set_name(name);
  return Unary<v1::RevokeTokenResponse>(
      [&](auto* ctx, auto* resp) { return stub_->RevokeToken(ctx, request, resp); });
}

absl::StatusOr<v1::RecordStageManifestResponse> SchedulerClient::RecordStageManifest(
    const std::string& manifest_json) {
  v1::RecordStageManifestRequest request;
  request.set_manifest_json(manifest_json);
  return Unary<v1::RecordStageManifestResponse>(
      [&](auto* ctx, auto* resp) { return stub_->RecordStageManifest(ctx, request, resp); });
}

absl::StatusOr<v1::ListStageManifestsResponse> SchedulerClient::ListStageManifests(
    const v1::ListStageManifestsRequest& request) {
  return Unary<v1::ListStageManifestsResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListStageManifests(ctx, request, resp); });
}

absl::StatusOr<v1::ReportResponse> SchedulerClient::GetReport(const v1::ReportRequest& request) {
  return Unary<v1::ReportResponse>([&](grpc::ClientContext* c, v1::ReportResponse* r) {
    return stub_->GetReport(c, request, r);
  });
}

absl::StatusOr<v1::GetDefinitionsResponse> SchedulerClient::GetDefinitions(
    const v1::GetDefinitionsRequest& request) {
  return Unary<v1::GetDefinitionsResponse>(
      [&](grpc::ClientContext* c, v1::GetDefinitionsResponse* r) {
        return stub_->GetDefinitions(c, request, r);
      });
}

absl::Status SchedulerClient::ReadTrajectories(
    const v1::ReadTrajectoriesRequest& request,
    const std::function<absl::Status(v1::Trajectory&&)>& on_trajectory) {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::ReadTrajectoriesResponse>> reader =
      stub_->ReadTrajectories(&context, request);
  // Each message is parsed onto an arena and freed at once: a million turns
  // allocated and freed one by one cost more than writing them out. The
  // last trajectory of a message is held (off the arena) until the next
  // message shows whether it goes on.
  google::protobuf::Arena arena;
  v1::Trajectory held;
  bool holding = false;
  absl::Status status;
  while (status.ok()) {
    auto* response = google::protobuf::Arena::CreateMessage<v1::ReadTrajectoriesResponse>(&arena);
    if (!reader->Read(response)) break;
    auto& parts = *response->mutable_trajectories();
    for (int i = 0; i < parts.size() && status.ok(); ++i) {
      v1::Trajectory& part = parts[i];
      if (part.continued()) {
        if (!holding || part.summary().trajectory_id() != held.summary().trajectory_id()) {
          status = absl::DataLossError("the scheduler sent a part of a trajectory out of order");
          break;
        }
        for (v1::Turn& turn : *part.mutable_turns()) *held.add_turns() = std::move(turn);
        continue;
      }
      if (holding) {
        holding = false;
        status = on_trajectory(std::move(held));
        if (!status.ok()) break;
      }
      if (i + 1 < parts.size()) {
        // Whole: the next part of this message starts another trajectory.
        status = on_trajectory(std::move(part));
      } else {
        held = part;
        holding = true;
      }
    }
    arena.Reset();
  }
  if (!status.ok()) {
    context.TryCancel();
    (void)reader->Finish();
    return status;
  }
  PTXB_RETURN_IF_ERROR(Convert(reader->Finish()));
  if (holding) return on_trajectory(std::move(held));
  return absl::OkStatus();
}

absl::Status SchedulerClient::WatchExperiment(
    const v1::WatchExperimentRequest& request,
    const std::function<bool(const v1::WatchExperimentResponse&)>& on_update,
    const std::function<bool()>& should_stop) {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::WatchExperimentResponse>> reader =
      stub_->WatchExperiment(&context, request);

  // Cancelling the context is the only way to interrupt a blocked Read().
  absl::Notification done;
  std::atomic<bool> interrupted{false};
  std::thread poller([&] {
    while (!done.WaitForNotificationWithTimeout(absl::Milliseconds(100))) {
      if (should_stop && should_stop()) {
        interrupted = true;
        context.TryCancel();
        return;
      }
    }
  });

  bool stopped_by_caller = false;
  v1::WatchExperimentResponse response;
  while (reader->Read(&response)) {
    if (!on_update(response)) {
      stopped_by_caller = true;
      context.TryCancel();
      break;
    }
  }
  grpc::Status status = reader->Finish();
  done.Notify();
  poller.join();

  if (stopped_by_caller) return absl::OkStatus();
  if (interrupted) return absl::CancelledError("interrupted");
  if (status.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the scheduler at ", address_, " ended the watch of ", request.experiment_id(),
                     " before the experiment finished"));
  }
  return Convert(status);
}

}  // namespace ptxbench::cli
