#ifndef PTXBENCH_EXECUTOR_TASK_HANDLER_H_
#define PTXBENCH_EXECUTOR_TASK_HANDLER_H_

// What an executor does with one leased task. Workers evaluate kernels,
// gateways call models; the lease/heartbeat/report protocol around the work
// is the same and lives in ExecutorRunner.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/any_invocable.h"

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ptxbench/v1/executor.pb.h"

namespace ptxbench::executor {

// Thread safety: the runner calls Run() from up to `slots` threads at once.
class TaskHandler {
 public:
  virtual ~TaskHandler();

  // Runs one leased task. Returns the outcome to report (CompleteRequest with
  // llm/eval/failure set; lease/executor filled by the runner). `cancelled`
  // becomes true when the lease was revoked or the runner is stopping: the
  // handler should then return soon; what it returns is discarded.
  virtual ptxbench::v1::CompleteRequest Run(const ptxbench::v1::Task& task,
                                            const std::atomic<bool>& cancelled) = 0;
};

// A handler that keeps its tasks in flight itself (an event loop, e.g. the
// gateway's HTTP calls), so the runner can hold hundreds of leases without a
// thread per task. Thread safety: Start() is called from the runner's lease
// threads.
class AsyncTaskHandler {
 public:
  using Done = absl::AnyInvocable<void(ptxbench::v1::CompleteRequest) &&>;
  virtual ~AsyncTaskHandler();

  // Starts one leased task and returns without waiting for it. `done` must
  // run exactly once, from any thread, with the outcome (as Run() returns
  // it); after `cancelled` becomes true it should run soon, and what it
  // carries is discarded. The runner's Run() waits for every `done`.
  virtual void Start(const ptxbench::v1::Task& task,
                     std::shared_ptr<const std::atomic<bool>> cancelled, Done done) = 0;
};

// Sleeps `d` in short slices; returns false as soon as `cancelled` is true.
// For handlers whose work is waiting (simulations, polling a child).
bool SleepUnlessCancelled(absl::Duration d, const std::atomic<bool>& cancelled);

// The outcome "this task could not be done", of the given failure class.
ptxbench::v1::CompleteRequest FailureReport(ptxbench::v1::FailureClass failure_class,
                                            std::string message, int64_t retry_after_ms = 0);

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_TASK_HANDLER_H_
