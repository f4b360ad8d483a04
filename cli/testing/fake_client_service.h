#ifndef PTXBENCH_CLI_TESTING_FAKE_CLIENT_SERVICE_H_
#define PTXBENCH_CLI_TESTING_FAKE_CLIENT_SERVICE_H_

// A ClientService with canned answers, for the CLI's tests (in-process) and
// for the fake scheduler binary that `up` is tested with. It knows one
// experiment, exp_0123abcd ("quickstart", 4 trajectories); its watch stream
// sends two updates, the second one finished. Thread-safe.

#include <string>

#include "absl/synchronization/mutex.h"
#include "ptxbench/v1/client.grpc.pb.h"

namespace ptxbench::cli::fakes {

inline constexpr char kFakeExperimentId[] = "exp_0123abcd";
// Another experiment whose watch sends one update and then waits until the
// client goes away (for Ctrl-C tests).
inline constexpr char kSlowExperimentId[] = "exp_slow";

class FakeClientService final : public ::ptxbench::v1::ClientService::Service {
 public:
  // A spec containing the key "bad" fails INVALID_ARGUMENT, naming the file.
  grpc::Status SubmitExperiment(grpc::ServerContext* context,
                                const v1::SubmitExperimentRequest* request,
                                v1::SubmitExperimentResponse* response) override;
  grpc::Status GetExperiment(grpc::ServerContext* context, const v1::GetExperimentRequest* request,
                             v1::GetExperimentResponse* response) override;
  grpc::Status ListExperiments(grpc::ServerContext* context,
                               const v1::ListExperimentsRequest* request,
                               v1::ListExperimentsResponse* response) override;
  grpc::Status WatchExperiment(grpc::ServerContext* context,
                               const v1::WatchExperimentRequest* request,
                               grpc::ServerWriter<v1::WatchExperimentResponse>* writer) override;
  // Any caller is the admin here (the fake checks no token).
  grpc::Status WhoAmI(grpc::ServerContext*, const v1::WhoAmIRequest*,
                      v1::WhoAmIResponse* response) override {
    response->set_name("admin");
    response->set_role(v1::ROLE_ADMIN);
    return grpc::Status::OK;
  }
  // No executor ever registers here.
  grpc::Status ListExecutors(grpc::ServerContext*, const v1::ListExecutorsRequest*,
                             v1::ListExecutorsResponse*) override {
    return grpc::Status::OK;
  }

  // Whether SubmitExperiment reports a new experiment (default true).
  void set_created(bool created);
  v1::SubmitExperimentRequest last_submit();

 private:
  absl::Mutex mu_;
  bool created_ ABSL_GUARDED_BY(mu_) = true;
  v1::SubmitExperimentRequest last_submit_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench::cli::fakes

#endif  // PTXBENCH_CLI_TESTING_FAKE_CLIENT_SERVICE_H_
