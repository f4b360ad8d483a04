#ifndef PTXBENCH_SCHEDULER_API_STREAM_REACTOR_H_
#define PTXBENCH_SCHEDULER_API_STREAM_REACTOR_H_

// A server stream written from a thread of its own (WatchExperiment,
// ReadTrajectories): the work may block (database reads, waiting between
// snapshots), which gRPC's callback threads must not. gRPC's callbacks only
// flip the flags the thread waits on. One write is in flight at a time.
// Internal to the scheduler.

#include <functional>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/support/server_callback.h"

namespace ptxbench::scheduler {

template <typename Response>
class ThreadedWriteReactor : public grpc::ServerWriteReactor<Response> {
 public:
  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    write_pending_ = false;
    if (!ok) ended_ = true;
  }
  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    ended_ = true;
  }
  void OnDone() override {
    thread_.join();
    delete this;
  }

 protected:
  // Runs `body` on the stream's thread; once it returns and no write is in
  // flight, finishes with its status, or CANCELLED `ended_message` when the
  // client went away. Call last in the constructor.
  void Start(std::function<grpc::Status()> body, std::string ended_message) {
    thread_ = std::thread([this, body = std::move(body), message = std::move(ended_message)] {
      const grpc::Status status = body();
      bool ended;
      {
        absl::MutexLock lock(&mu_);
        auto no_write = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !write_pending_; };
        mu_.Await(absl::Condition(&no_write));
        ended = ended_;
      }
      this->Finish(ended ? grpc::Status(grpc::StatusCode::CANCELLED, message) : status);
    });
  }

  // Starts writing `response` once the previous write is done; false (and
  // nothing written) when the call has ended. `response` must stay as it is
  // until the next call here or WaitWritten.
  bool StartWriteAfterPrevious(const Response* response) {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &ThreadedWriteReactor::WriteDoneOrEnded));
    if (ended_) return false;
    write_pending_ = true;
    this->StartWrite(response);
    return true;
  }

  // Waits until the write in flight is done; false when the call has ended.
  bool WaitWritten() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &ThreadedWriteReactor::WriteDoneOrEnded));
    return !ended_;
  }

  // Waits up to `timeout` for the call to end; whether it has.
  bool WaitEnded(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&ended_), timeout);
  }

 private:
  bool WriteDoneOrEnded() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !write_pending_ || ended_;
  }

  absl::Mutex mu_;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;  // cancelled, or a write failed
  bool write_pending_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_API_STREAM_REACTOR_H_
