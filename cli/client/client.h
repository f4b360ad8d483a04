#ifndef PTXBENCH_CLI_CLIENT_CLIENT_H_
#define PTXBENCH_CLI_CLIENT_CLIENT_H_

// SchedulerClient: the CLI's connection to a scheduler's ClientService. Each
// unary call gets the configured deadline; failures come back as absl::Status
// whose message is ready to show to a user (an unreachable scheduler says so,
// with the address and how to start one). Not thread-safe; one per command.

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "auth/channel.h"
#include "grpcpp/channel.h"
#include "ptxbench/v1/client.grpc.pb.h"

namespace ptxbench::cli {

namespace v1 = ::ptxbench::v1;

class SchedulerClient {
 public:
  // `address` is HOST:PORT; every call carries `security`'s token, over TLS
  // when it has a CA; `timeout` bounds every unary call.
  SchedulerClient(std::string address, const auth::ChannelSecurity& security,
                  absl::Duration timeout);

  const std::string& address() const { return address_; }

  absl::StatusOr<v1::SubmitExperimentResponse> SubmitExperiment(
      const v1::SubmitExperimentRequest& request);
  absl::StatusOr<v1::SubmitEvalResponse> SubmitEval(const v1::SubmitEvalRequest& request);
  absl::StatusOr<v1::GetExperimentResponse> GetExperiment(const std::string& experiment_id);
  absl::StatusOr<v1::ListExperimentsResponse> ListExperiments();
  absl::StatusOr<v1::ListTrajectoriesResponse> ListTrajectories(
      const v1::ListTrajectoriesRequest& request);
  absl::StatusOr<v1::GetTrajectoryResponse> GetTrajectory(const std::string& trajectory_id);
  absl::StatusOr<v1::CancelResponse> Cancel(const v1::CancelRequest& request);
  absl::StatusOr<v1::RetryResponse> Retry(const v1::RetryRequest& request);
  absl::StatusOr<v1::ExtendResponse> Extend(const v1::ExtendRequest& request);
  absl::StatusOr<v1::ListExecutorsResponse> ListExecutors();
  absl::StatusOr<v1::DrainResponse> Drain(const std::string& executor_id);
  absl::StatusOr<v1::ReportResponse> GetReport(const v1::ReportRequest& request);
  absl::StatusOr<v1::GetDefinitionsResponse> GetDefinitions(
      const v1::GetDefinitionsRequest& request);
  absl::StatusOr<v1::WhoAmIResponse> WhoAmI();
  absl::StatusOr<v1::CreateTokenResponse> CreateToken(const v1::CreateTokenRequest& request);
  absl::StatusOr<v1::ListTokensResponse> ListTokens();
  absl::StatusOr<v1::RevokeTokenResponse> RevokeToken(const std::string& name);
  absl::StatusOr<v1::RecordStageManifestResponse> RecordStageManifest(
      const std::string& manifest_json);
  absl::StatusOr<v1::ListStageManifestsResponse> ListStageManifests(
      const v1::ListStageManifestsRequest& request);

  // Streams ReadTrajectories and calls `on_trajectory` with each whole
  // trajectory (its parts joined), in order; an error from it cancels the
  // stream and is returned. No deadline: an export may take minutes.
  absl::Status ReadTrajectories(const v1::ReadTrajectoriesRequest& request,
                                const std::function<absl::Status(v1::Trajectory&&)>& on_trajectory);

  // OK once the scheduler answers (WhoAmI), waiting up to `wait`
  // for a connection instead of failing at once: for a scheduler that is
  // still starting.
  absl::Status Probe(absl::Duration wait);

  // Streams WatchExperiment. `on_update` is called for every response and
  // returns false to stop; `should_stop` is polled about every 100 ms (e.g.
  // "Ctrl-C was pressed") and ends the stream with CANCELLED. OK when
  // on_update stopped it; otherwise the stream's error, or FAILED_PRECONDITION
  // when the scheduler ended the stream on its own.
  absl::Status WatchExperiment(
      const v1::WatchExperimentRequest& request,
      const std::function<bool(const v1::WatchExperimentResponse&)>& on_update,
      const std::function<bool()>& should_stop);

  // The message shown when the scheduler cannot be reached.
  static std::string UnreachableMessage(const std::string& address);

 private:
  // Runs one unary call with a fresh context and the deadline.
  template <typename Response, typename Call>
  absl::StatusOr<Response> Unary(const Call& call);

  // The call with a context of its own; wait_for_ready waits for a connection
  // until `deadline` (else the call fails as soon as none is up).
  template <typename Response, typename Call>
  absl::StatusOr<Response> UnaryWithDeadline(const Call& call, absl::Time deadline,
                                             bool wait_for_ready);

  // grpc::Status -> absl::Status with a user-facing message.
  absl::Status Convert(const grpc::Status& status) const;

  std::string address_;
  absl::Duration timeout_;
  bool tls_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ClientService::Stub> stub_;
};

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_CLIENT_CLIENT_H_
