// WatchExperiment: a server stream of progress snapshots and new events.
// Each watch has its own small thread that polls the Reader at the requested
// interval: watchers are few (people at terminals), and polling committed
// state keeps the writer thread free of any per-watcher work.
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/grpc_status.h"
#include "scheduler/service.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {

class WatchReactor final : public grpc::ServerWriteReactor<v1::WatchExperimentResponse> {
 public:
  WatchReactor(Reader* reader, const v1::WatchExperimentRequest& request)
      : reader_(reader), request_(request) {
    thread_ = std::thread([this] { Loop(); });
  }

  // gRPC calls these on its own threads; the loop thread waits for them.
  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    write_pending_ = false;
    if (!ok) stop_ = true;
  }
  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  void OnDone() override {
    thread_.join();
    delete this;
  }

 private:
  void Loop() {
    const absl::Duration interval = absl::Milliseconds(
        request_.interval_ms() > 0 ? std::max<int64_t>(request_.interval_ms(), 100) : 1000);
    auto write_done_or_stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !write_pending_ || stop_;
    };
    int64_t after = request_.after_event_id();
    if (after == 0) {
      // The request may name the experiment: resolve its id first.
      absl::StatusOr<v1::GetExperimentResponse> exp =
          reader_->GetExperiment(request_.experiment_id());
      if (!exp.ok()) {
        Finish(ToGrpcStatus(exp.status()));
        return;
      }
      experiment_id_ = exp->experiment().experiment_id();
      absl::StatusOr<int64_t> last = reader_->LastEventId(experiment_id_);
      after = last.ok() ? *last : 0;
    }
    while (true) {
      absl::StatusOr<v1::GetExperimentResponse> exp =
          reader_->GetExperiment(experiment_id_.empty() ? request_.experiment_id() : experiment_id_);
      if (!exp.ok()) {
        Finish(ToGrpcStatus(exp.status()));
        return;
      }
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
      bool stopped;
      {
        absl::MutexLock lock(&mu_);
        if (stop_) break;
        write_pending_ = true;
        StartWrite(&response_);
        mu_.Await(absl::Condition(&write_done_or_stopped));
        if (!stop_ && !finished) mu_.AwaitWithTimeout(absl::Condition(&stop_), interval);
        stopped = stop_;
      }
      if (stopped) break;
      if (finished) {
        Finish(grpc::Status::OK);
        return;
      }
    }
    // Cancelled or the client stopped reading. A pending write completes (or
    // fails) before OnDone, so finishing here is safe.
    {
      absl::MutexLock lock(&mu_);
      auto no_write = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !write_pending_; };
      mu_.Await(absl::Condition(&no_write));
    }
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "watch ended"));
  }

  Reader* reader_;
  v1::WatchExperimentRequest request_;
  std::string experiment_id_;
  v1::WatchExperimentResponse response_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool write_pending_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace

grpc::ServerWriteReactor<v1::WatchExperimentResponse>* ClientServiceImpl::WatchExperiment(
    grpc::CallbackServerContext*, const v1::WatchExperimentRequest* request) {
  return new WatchReactor(deps_.reader, *request);
}

}  // namespace ptxbench::scheduler
