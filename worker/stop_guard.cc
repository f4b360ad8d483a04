#include "worker/stop_guard.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/stop_signals.h"

namespace ptxbench::worker {

namespace v1 = ::ptxbench::v1;
namespace {

// What a process of the evaluation ended midway reads as. A wrong, missing
// or vendor-library verdict comes from checks that ran to their end.
bool SignalCouldCause(v1::EvalStatus status) {
  return status == v1::COMPILE_ERROR || status == v1::RUNTIME_ERROR || status == v1::TIMEOUT;
}

bool Interruptible(const v1::EvalResult& result) {
  if (SignalCouldCause(result.status())) return true;
  for (const v1::WorkloadTrace& t : result.traces()) {
    if (SignalCouldCause(t.status())) return true;
  }
  return false;
}

}  // namespace

StopSignalGuard::StopSignalGuard(executor::TaskHandler* inner,
                                 std::function<int()> signals_received)
    : inner_(inner),
      signals_received_(signals_received ? std::move(signals_received)
                                         : std::function<int()>(daemon::StopSignalsReceived)) {}

v1::CompleteRequest StopSignalGuard::Run(const v1::Task& task,
                                         const std::atomic<bool>& cancelled) {
  const int before = signals_received_();
  v1::CompleteRequest out = inner_->Run(task, cancelled);
  if (!out.has_eval() || signals_received_() == before || !Interruptible(out.eval())) return out;
  const v1::EvalStatus status = out.eval().status();
  LogWarning("evaluation failed after a stop signal; handed back",
             {{"task_id", task.lease().task_id()}, {"status", v1::EvalStatus_Name(status)}});
  return executor::FailureReport(
      v1::INFRA,
      absl::StrCat("the evaluation ended ", v1::EvalStatus_Name(status),
                   " after the worker got a stop signal, which reaches every process of its tree "
                   "(a Slurm scancel): handed back to be evaluated again"));
}

}  // namespace ptxbench::worker
