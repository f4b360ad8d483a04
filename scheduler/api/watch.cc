// WatchExperiment: a server stream of progress snapshots and new events.
// Each watch has its own small thread (stream_reactor.h) that polls the
// Reader at the requested interval: watchers are few (people at terminals),
// and polling committed state keeps the writer thread free of any
// per-watcher work.
#include "absl/time/time.h"
#include "common/grpc_status.h"
#include "scheduler/api/service.h"
#include "scheduler/api/stream_reactor.h"
#include "scheduler/state/finish.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {

class WatchReactor final : public ThreadedWriteReactor<v1::WatchExperimentResponse> {
 public:
  WatchReactor(Reader* reader, const v1::WatchExperimentRequest& request)
      : reader_(reader), request_(request) {
    Start([this] { return Loop(); }, "watch ended");
  }

 private:
  grpc::Status Loop() {
    const absl::Duration interval = absl::Milliseconds(
        request_.interval_ms() > 0 ? std::max<int64_t>(request_.interval_ms(), 100) : 1000);
    int64_t after = request_.after_event_id();
    if (after == 0) {
      // The request may name the experiment: resolve its id first.
      absl::StatusOr<v1::GetExperimentResponse> exp =
          reader_->GetExperiment(request_.experiment_id());
      if (!exp.ok()) return ToGrpcStatus(exp.status());
      experiment_id_ = exp->experiment().experiment_id();
      absl::StatusOr<int64_t> last = reader_->LastEventId(experiment_id_);
      after = last.ok() ? *last : 0;
    }
    while (true) {
      absl::StatusOr<v1::GetExperimentResponse> exp =
          reader_->GetExperiment(experiment_id_.empty() ? request_.experiment_id() : experiment_id_);
      if (!exp.ok()) return ToGrpcStatus(exp.status());
      experiment_id_ = exp->experiment().experiment_id();
      response_.Clear();
      *response_.mutable_progress() = exp->progress();
      absl::StatusOr<std::vector<v1::Event>> events = reader_->Events(experiment_id_, after, 200);
      if (events.ok()) {
        for (v1::Event& e : *events) {
          after = e.event_id();
          *response_.add_events() = std::move(e);
        }
      }
      const bool finished =
          exp->progress().total() > 0 && exp->progress().terminal() == exp->progress().total();
      response_.set_finished(finished);
      // Cancelled or the client stopped reading: Start's wrapper says so.
      if (!StartWriteAfterPrevious(&response_) || !WaitWritten()) return grpc::Status::OK;
      if (finished) return grpc::Status::OK;
      if (WaitEnded(interval)) return grpc::Status::OK;
    }
  }

  Reader* reader_;
  v1::WatchExperimentRequest request_;
  std::string experiment_id_;
  v1::WatchExperimentResponse response_;
};

}  // namespace

grpc::ServerWriteReactor<v1::WatchExperimentResponse>* ClientServiceImpl::WatchExperiment(
    grpc::CallbackServerContext* ctx, const v1::WatchExperimentRequest* request) {
  if (absl::Status denied = Deny(ctx, "WatchExperiment"); !denied.ok()) {
    return new RefusedStream<v1::WatchExperimentResponse>(denied);
  }
  return new WatchReactor(deps_.reader, *request);
}

}  // namespace ptxbench::scheduler
