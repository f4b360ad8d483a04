#include "cli/testing/fake_client_service.h"

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"

namespace ptxbench::cli::fakes {

namespace v1 = ::ptxbench::v1;

grpc::Status FakeClientService::SubmitExperiment(grpc::ServerContext*,
                                                 const v1::SubmitExperimentRequest* request,
                                                 v1::SubmitExperimentResponse* response) {
  absl::MutexLock lock(&mu_);
  last_submit_ = *request;
  if (request->spec_json().find("\"bad\"") != std::string::npos) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat(request->spec_path(), ": field 'bad': not allowed"));
  }
  response->set_experiment_id(kFakeExperimentId);
  response->set_created(created_);
  response->set_trajectories(12);
  return grpc::Status::OK;
}

grpc::Status FakeClientService::GetExperiment(grpc::ServerContext*,
                                              const v1::GetExperimentRequest* request,
                                              v1::GetExperimentResponse* response) {
  if (request->experiment_id() != kFakeExperimentId &&
      request->experiment_id() != kSlowExperimentId) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("no experiment '", request->experiment_id(), "'"));
  }
  response->mutable_experiment()->set_experiment_id(request->experiment_id());
  response->mutable_experiment()->set_name("quickstart");
  response->mutable_progress()->set_total(4);
  (*response->mutable_progress()->mutable_by_state())["AWAITING_MODEL"] = 4;
  return grpc::Status::OK;
}

grpc::Status FakeClientService::ListExperiments(grpc::ServerContext* context,
                                                const v1::ListExperimentsRequest*,
                                                v1::ListExperimentsResponse* response) {
  v1::GetExperimentRequest get;
  get.set_experiment_id(kFakeExperimentId);
  return GetExperiment(context, &get, response->add_experiments());
}

grpc::Status FakeClientService::WatchExperiment(
    grpc::ServerContext* context, const v1::WatchExperimentRequest* request,
    grpc::ServerWriter<v1::WatchExperimentResponse>* writer) {
  if (request->experiment_id() == kSlowExperimentId) {
    v1::WatchExperimentResponse update;
    update.mutable_progress()->set_total(4);
    update.mutable_progress()->set_terminal(1);
    writer->Write(update);
    while (!context->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return grpc::Status::CANCELLED;
  }
  for (int done = 2; done <= 4; done += 2) {
    v1::WatchExperimentResponse update;
    update.mutable_progress()->set_total(4);
    update.mutable_progress()->set_terminal(done);
    (*update.mutable_progress()->mutable_by_state())["SUBMITTED"] = done;
    update.set_finished(done == 4);
    v1::Event* event = update.add_events();
    event->set_kind("trajectory.submitted");
    event->set_trajectory_id("tr_1");
    writer->Write(update);
  }
  return grpc::Status::OK;
}

void FakeClientService::set_created(bool created) {
  absl::MutexLock lock(&mu_);
  created_ = created;
}

v1::SubmitExperimentRequest FakeClientService::last_submit() {
  absl::MutexLock lock(&mu_);
  return last_submit_;
}

}  // namespace ptxbench::cli::fakes
