// ExecutorRunner's reports (executor_runner.h): finished tasks handed to the
// reporters, each report retried until the scheduler takes it, refuses it for
// good or the lease is gone, and the last report of a task left unfinished.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "executor/backoff.h"
#include "executor/executor_runner.h"
#include "executor/executor_runner_internal.h"
#include "executor/report_repair.h"

namespace ptxbench::executor {

namespace v1 = ::ptxbench::v1;
using runner_internal::ErrorText;
using runner_internal::IsTransient;
using runner_internal::Ms;
using runner_internal::OutcomeName;

void ExecutorRunner::ReportLoop() {
  for (;;) {
    std::pair<v1::CompleteRequest, std::shared_ptr<HeldTask>> next;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !finished_.empty() || loops_done_;
      };
      mu_.Await(absl::Condition(&ready));
      if (finished_.empty()) return;  // loops_done_: nothing is left in flight
      next = std::move(finished_.front());
      finished_.pop_front();
    }
    std::optional<v1::Task> task = FinishTask(std::move(next.first), next.second);
    if (task.has_value()) {
      StartTask(*task);  // takes the room of the one reported, counted already
      continue;
    }
    absl::MutexLock lock(&mu_);
    --started_tasks_;
  }
}

std::optional<v1::Task> ExecutorRunner::ReportComplete(v1::CompleteRequest request,
                                                       const std::shared_ptr<HeldTask>& held) {
  const std::string task_id = request.lease().task_id();
  const std::string lease_id = request.lease().lease_id();
  // Text hostile input wrote (an agent's file names, a CLI's last words)
  // must not make the whole report unparseable at the scheduler.
  if (std::vector<std::string> fixed = MakeStringsValidUtf8(&request); !fixed.empty()) {
    const size_t listed = std::min<size_t>(fixed.size(), 8);
    LogWarning("report fields were not UTF-8; bad bytes replaced",
               {{"task_id", task_id},
                {"fields", absl::StrJoin(fixed.begin(), fixed.begin() + listed, ",")},
                {"count", absl::StrCat(fixed.size())}});
  }
  bool minimal = false;  // the refused report's minimal form was sent
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  for (int attempt = 1;; ++attempt) {
    if (held->revoked) {
      LogWarning("revoked while reporting; result dropped",
                 {{"task_id", task_id}, {"lease_id", lease_id}});
      return std::nullopt;
    }
    if (stopping()) {
      LogWarning("stopped before the report was accepted; result dropped",
                 {{"task_id", task_id}, {"lease_id", lease_id}});
      return std::nullopt;
    }
    request.set_executor_id(executor_id());
    // The next task is asked for on the first attempt only: a retry may
    // repeat a report that was accepted, whose next task's reply was lost.
    request.clear_next();
    if (attempt == 1) {
      absl::MutexLock lock(&mu_);
      if (!draining_ && !stopping_) {
        ptxbench::v1::LeaseRequest* next = request.mutable_next();
        next->set_executor_id(executor_id_);
        for (ptxbench::v1::TaskKind kind : options_.lease_kinds) next->add_kinds(kind);
      }
    }
    ptxbench::v1::CompleteResponse response;
    grpc::Status status;
    {
      TrackedContext ctx(this, options_.rpc_timeout, /*is_poll=*/false);
      status = stub_->Complete(ctx.get(), request, &response);
    }
    if (status.ok()) {
      LogInfo("completed", {{"task_id", task_id},
                            {"lease_id", lease_id},
                            {"outcome", OutcomeName(request)},
                            {"attempt", absl::StrCat(attempt)}});
      if (response.next().drain()) SetDraining("complete");
      if (!response.next().has_task()) return std::nullopt;
      return response.next().task();
    }
    if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      LogWarning("rejected",
                 {{"task_id", task_id}, {"lease_id", lease_id}, {"error", ErrorText(status)}});
      return std::nullopt;
    }
    if (!IsTransient(status) && status.error_code() != grpc::StatusCode::CANCELLED) {
      if (!minimal) {
        // Never a silent drop: the outcome's class, reason and totals go
        // once more, without what made the report too much to take.
        LogError("report refused; sending its minimal form",
                 {{"task_id", task_id}, {"lease_id", lease_id}, {"error", ErrorText(status)}});
        request = MinimalReport(request, ErrorText(status));
        minimal = true;
        backoff.Reset();
        continue;
      }
      LogError("report failed; result dropped",
               {{"task_id", task_id}, {"lease_id", lease_id}, {"error", ErrorText(status)}});
      return std::nullopt;
    }
    absl::Duration retry_in = backoff.Next();
    LogWarning("report failed; retrying", {{"task_id", task_id},
                                           {"lease_id", lease_id},
                                           {"attempt", absl::StrCat(attempt)},
                                           {"error", ErrorText(status)},
                                           {"retry_in", Ms(retry_in)}});
    Sleep(retry_in, /*wake_on_drain=*/false);
  }
}

void ExecutorRunner::ReportAbandoned(const v1::LeaseRef& lease) {
  v1::CompleteRequest request;
  request.set_executor_id(executor_id());
  *request.mutable_lease() = lease;
  request.mutable_failure()->set_failure_class(ptxbench::v1::INFRA);
  request.mutable_failure()->set_message("executor stopped before finishing the task");
  // Untracked: Stop() has cancelled everything tracked, and this one call is
  // what lets the scheduler re-queue now instead of at lease expiry.
  grpc::ClientContext ctx;
  ctx.set_deadline(ShortDeadline());
  ptxbench::v1::CompleteResponse response;
  grpc::Status status = stub_->Complete(&ctx, request, &response);
  if (!status.ok()) {
    LogWarning("abandon report failed; the lease will expire",
               {{"task_id", lease.task_id()}, {"error", ErrorText(status)}});
  }
}

}  // namespace ptxbench::executor
