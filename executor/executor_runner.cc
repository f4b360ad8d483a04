#include "executor/executor_runner.h"

#include <algorithm>
#include <thread>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "auth/channel.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "common/sd_notify.h"
#include "executor/backoff.h"
#include "executor/executor_runner_internal.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

#ifndef PTXB_VERSION
#define PTXB_VERSION "dev"
#endif

namespace ptxbench::executor {
namespace {

using ::ptxbench::v1::CompleteRequest;
using ::ptxbench::v1::LeaseRef;
using ::ptxbench::v1::Task;
using runner_internal::ErrorText;
using runner_internal::IsRefusal;
using runner_internal::IsTransient;
using runner_internal::Ms;
using runner_internal::OutcomeName;

}  // namespace

ExecutorRunner::ExecutorRunner(Options options, TaskHandler* handler)
    : ExecutorRunner(std::move(options), handler, nullptr) {}

ExecutorRunner::ExecutorRunner(Options options, AsyncTaskHandler* handler)
    : ExecutorRunner(std::move(options), nullptr, handler) {}

ExecutorRunner::ExecutorRunner(Options options, TaskHandler* handler,
                               AsyncTaskHandler* async_handler)
    : options_(std::move(options)), handler_(handler), async_handler_(async_handler) {
  grpc::ChannelArguments args;
  // Reconnect quickly once a restarted scheduler listens again, so held
  // leases are heartbeated and reported well inside their TTL. The minimum
  // reconnect backoff is left alone on purpose: gRPC also uses it as the
  // minimum *connect timeout*, and a small one aborts the handshake with a
  // scheduler that is busy recovering ("tcp handshaker shutdown"), which kept
  // executors away long enough for their leases to expire.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // Leased LLM tasks carry whole conversations.
  args.SetMaxReceiveMessageSize(64 << 20);
  stub_ = ptxbench::v1::ExecutorService::NewStub(
      auth::NewChannel(options_.scheduler_address, options_.security, args));
}

ExecutorRunner::~ExecutorRunner() = default;

std::string ExecutorRunner::executor_id() const {
  absl::MutexLock lock(&mu_);
  return executor_id_;
}

bool ExecutorRunner::stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

void ExecutorRunner::Stop() {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  stopping_ = true;
  for (auto& [task_id, held] : held_) held->cancelled = true;
  for (auto& [ctx, is_poll] : calls_) ctx->TryCancel();
}

void ExecutorRunner::Fail(absl::Status status) {
  {
    absl::MutexLock lock(&mu_);
    if (fatal_.ok()) fatal_ = std::move(status);
  }
  Stop();
}

void ExecutorRunner::SetDraining(absl::string_view source) {
  absl::MutexLock lock(&mu_);
  if (draining_) return;
  draining_ = true;
  LogInfo("draining", {{"executor_id", executor_id_},
                       {"source", std::string(source)},
                       {"held", absl::StrCat(held_.size())}});
  for (auto& [ctx, is_poll] : calls_) {
    if (is_poll) ctx->TryCancel();
  }
}

bool ExecutorRunner::Sleep(absl::Duration d, bool wake_on_drain) {
  absl::MutexLock lock(&mu_);
  auto woken = [this, wake_on_drain]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || (wake_on_drain && draining_);
  };
  return !mu_.AwaitWithTimeout(absl::Condition(&woken), d);
}

absl::Status ExecutorRunner::Run() {
  {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("ExecutorRunner::Run called twice");
    started_ = true;
    if (stopping_) return absl::OkStatus();
  }
  absl::Status registered = Register(/*seen_generation=*/0);
  if (!registered.ok()) {
    absl::MutexLock lock(&mu_);
    return stopping_ || draining_ ? absl::OkStatus() : registered;
  }

  std::thread heartbeat([this] { HeartbeatLoop(); });
  const int slots = std::max(1, options_.slots);
  auto rpc_threads = [slots](int asked) {
    return asked > 0 ? asked : std::min(slots, std::max(2, slots / 32));
  };
  const int lease_loops = async_handler_ == nullptr ? slots : rpc_threads(options_.lease_threads);
  std::vector<std::thread> loops, reporters;
  for (int slot = 0; slot < lease_loops; ++slot) {
    loops.emplace_back([this, slot] { LeaseLoop(slot); });
  }
  if (async_handler_ != nullptr) {
    for (int i = 0; i < rpc_threads(options_.report_threads); ++i) {
      reporters.emplace_back([this] { ReportLoop(); });
    }
  }
  for (std::thread& t : loops) t.join();
  {
    absl::MutexLock lock(&mu_);
    // Async tasks outlive the lease loops (drain): keep heartbeating them.
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return started_tasks_ == 0; };
    mu_.Await(absl::Condition(&idle));
    loops_done_ = true;
  }
  for (std::thread& t : reporters) t.join();
  heartbeat.join();
  Leave();

  absl::MutexLock lock(&mu_);
  if (!fatal_.ok()) return fatal_;
  LogInfo(stopping_ ? "stopped" : "drained", {{"executor_id", executor_id_}});
  return absl::OkStatus();
}

absl::Status ExecutorRunner::Register(int64_t seen_generation) {
  absl::MutexLock serial(&register_mu_);
  ptxbench::v1::RegisterRequest request;
  {
    absl::MutexLock lock(&mu_);
    if (generation_ != seen_generation) return absl::OkStatus();  // done by another thread
    request.set_executor_id(executor_id_);
  }
  request.set_kind(options_.kind);
  request.set_name(options_.name);
  *request.mutable_capabilities() = options_.capabilities;
  request.mutable_capabilities()->set_slots(std::max(1, options_.slots));
  request.set_version(options_.version.empty() ? PTXB_VERSION : options_.version);

  // Before the first registration nothing is held, so a drain (SIGTERM) ends
  // it at once instead of waiting for an unreachable scheduler; later ones
  // must finish, to report what is held.
  const bool first = seen_generation == 0;
  auto given_up = [this, first] {
    absl::MutexLock lock(&mu_);
    return stopping_ || (first && draining_);
  };
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  for (int attempt = 1;; ++attempt) {
    if (given_up()) return absl::CancelledError("executor stopped while registering");
    ptxbench::v1::RegisterResponse response;
    TrackedContext ctx(this, options_.rpc_timeout, /*is_poll=*/first);  // a drain cancels it
    grpc::Status status = stub_->Register(ctx.get(), request, &response);
    if (status.ok()) {
      absl::MutexLock lock(&mu_);
      executor_id_ = response.executor_id();
      ++generation_;
      if (response.heartbeat_interval_ms() > 0) {
        heartbeat_interval_ = absl::Milliseconds(response.heartbeat_interval_ms());
      } else if (response.lease_ttl_ms() > 0) {
        heartbeat_interval_ = absl::Milliseconds(response.lease_ttl_ms()) / 3;
      }
      // Under systemd (Type=notify, deploy/systemd/): registered is ready.
      if (generation_ == 1) {
        (void)SdNotify(absl::StrCat("READY=1\nSTATUS=registered as ", executor_id_));
      }
      LogInfo(generation_ == 1 ? "registered" : "re-registered",
              {{"executor_id", executor_id_},
               {"name", options_.name},
               {"kind", ptxbench::v1::ExecutorKind_Name(options_.kind)},
               {"slots", absl::StrCat(std::max(1, options_.slots))},
               {"scheduler", options_.scheduler_address},
               {"heartbeat_interval", Ms(heartbeat_interval_)},
               {"attempt", absl::StrCat(attempt)}});
      return absl::OkStatus();
    }
    if (given_up()) return absl::CancelledError("executor stopped while registering");
    if (!IsTransient(status)) {
      LogError("register refused",
               {{"scheduler", options_.scheduler_address}, {"error", ErrorText(status)}});
      return FromGrpcStatus(status);
    }
    absl::Duration wait = backoff.Next();
    LogWarning("register failed; retrying", {{"scheduler", options_.scheduler_address},
                                             {"attempt", absl::StrCat(attempt)},
                                             {"error", ErrorText(status)},
                                             {"retry_in", Ms(wait)}});
    Sleep(wait, /*wake_on_drain=*/first);
  }
}

void ExecutorRunner::LeaseLoop(int slot) {
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  absl::BitGen gen;
  for (;;) {
    ptxbench::v1::LeaseRequest request;
    int64_t generation;
    {
      absl::MutexLock lock(&mu_);
      // An async runner polls only while it has room for another task, and
      // a poll in flight holds its room: polls never lease past the slots.
      auto room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return async_handler_ == nullptr || stopping_ || draining_ ||
               started_tasks_ + polling_ < std::max(1, options_.slots);
      };
      mu_.Await(absl::Condition(&room));
      if (stopping_ || draining_) return;
      if (async_handler_ != nullptr) ++polling_;
      request.set_executor_id(executor_id_);
      generation = generation_;
    }
    absl::Duration wait = options_.lease_wait * absl::Uniform(gen, 0.75, 1.0);
    request.set_wait_ms(absl::ToInt64Milliseconds(wait));
    for (ptxbench::v1::TaskKind kind : options_.lease_kinds) request.add_kinds(kind);
    ptxbench::v1::LeaseResponse response;
    grpc::Status status;
    {
      TrackedContext ctx(this, wait + options_.rpc_timeout, /*is_poll=*/true);
      status = stub_->Lease(ctx.get(), request, &response);
    }
    if (async_handler_ != nullptr) {
      absl::MutexLock lock(&mu_);
      --polling_;  // its room passes to the task it brought, if any
      if (status.ok() && response.has_task() && !response.reregister()) ++started_tasks_;
    }
    if (!status.ok()) {
      if (status.error_code() == grpc::StatusCode::CANCELLED) {
        absl::MutexLock lock(&mu_);
        if (stopping_ || draining_) continue;  // we cancelled it; the loop ends
      }
      if (IsRefusal(status)) {
        // A revoked token, or an executor id another token owns: no retry
        // will change that. Stop, saying why.
        LogError("lease refused", {{"slot", absl::StrCat(slot)}, {"error", ErrorText(status)}});
        Fail(FromGrpcStatus(status));
        continue;
      }
      absl::Duration retry_in = backoff.Next();
      LogWarning(
          "lease failed; retrying",
          {{"slot", absl::StrCat(slot)}, {"error", ErrorText(status)}, {"retry_in", Ms(retry_in)}});
      Sleep(retry_in, /*wake_on_drain=*/true);
      continue;
    }
    backoff.Reset();
    if (response.reregister()) {
      LogInfo("scheduler asked to re-register", {{"executor_id", request.executor_id()}});
      absl::Status s = Register(generation);
      if (!s.ok() && !stopping()) Fail(s);
      continue;
    }
    if (response.has_task()) {
      if (async_handler_ != nullptr) {
        StartTask(response.task());
      } else {
        RunTask(response.task());
      }
    }
    if (response.drain()) SetDraining("lease");
  }
}

std::shared_ptr<ExecutorRunner::HeldTask> ExecutorRunner::HoldTask(const Task& task) {
  auto held = std::make_shared<HeldTask>();
  held->lease = task.lease();
  {
    absl::MutexLock lock(&mu_);
    held_[task.lease().task_id()] = held;
    if (stopping_) held->cancelled = true;
  }
  LogInfo("leased", {{"task_id", task.lease().task_id()},
                     {"lease_id", task.lease().lease_id()},
                     {"kind", ptxbench::v1::TaskKind_Name(task.kind())},
                     {"trajectory_id", task.trajectory_id()},
                     {"turn", absl::StrCat(task.turn())},
                     {"attempt", absl::StrCat(task.attempt())}});
  return held;
}

std::optional<Task> ExecutorRunner::FinishTask(CompleteRequest request,
                                               const std::shared_ptr<HeldTask>& held) {
  const LeaseRef& lease = held->lease;
  *request.mutable_lease() = lease;
  std::optional<Task> next;
  if (held->revoked) {
    LogWarning("revoked; result dropped",
               {{"task_id", lease.task_id()}, {"lease_id", lease.lease_id()}});
  } else if (held->cancelled) {
    LogWarning("abandoned", {{"task_id", lease.task_id()}, {"lease_id", lease.lease_id()}});
    ReportAbandoned(lease);
  } else {
    next = ReportComplete(std::move(request), held);
  }
  absl::MutexLock lock(&mu_);
  held_.erase(lease.task_id());
  return next;
}

void ExecutorRunner::RunTask(const Task& task) {
  std::optional<Task> next = task;
  while (next.has_value()) {
    std::shared_ptr<HeldTask> held = HoldTask(*next);
    next = FinishTask(handler_->Run(*next, held->cancelled), held);
  }
}

void ExecutorRunner::StartTask(const Task& task) {
  std::shared_ptr<HeldTask> held = HoldTask(task);  // counted in started_tasks_ already
  async_handler_->Start(task, std::shared_ptr<const std::atomic<bool>>(held, &held->cancelled),
                        [this, held](CompleteRequest request) {
                          absl::MutexLock lock(&mu_);
                          finished_.emplace_back(std::move(request), held);
                        });
}

std::chrono::system_clock::time_point ExecutorRunner::ShortDeadline() const {
  return absl::ToChronoTime(absl::Now() + std::min(options_.rpc_timeout, absl::Seconds(2)));
}

void ExecutorRunner::Leave() {
  ptxbench::v1::LeaveRequest request;
  request.set_executor_id(executor_id());
  // Untracked, as ReportAbandoned: nothing else is in flight now, and Stop()
  // has cancelled what was tracked.
  grpc::ClientContext ctx;
  ctx.set_deadline(ShortDeadline());
  ptxbench::v1::LeaveResponse response;
  grpc::Status status = stub_->Leave(&ctx, request, &response);
  if (!status.ok()) {
    LogWarning("leave failed; leases still held will expire",
               {{"executor_id", request.executor_id()}, {"error", ErrorText(status)}});
  } else if (response.released() > 0) {
    // A poll cancelled by the drain whose answer, a lease, was on the way.
    LogInfo("left; the scheduler re-queued leases this executor never received",
            {{"executor_id", request.executor_id()},
             {"released", absl::StrCat(response.released())}});
  }
}

void ExecutorRunner::HeartbeatLoop() {
  for (;;) {
    ptxbench::v1::HeartbeatRequest request;
    int64_t generation;
    {
      absl::MutexLock lock(&mu_);
      auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || loops_done_; };
      mu_.AwaitWithTimeout(absl::Condition(&done), heartbeat_interval_);
      if (stopping_ || loops_done_) return;
      for (const auto& [task_id, held] : held_) {
        if (!held->revoked) *request.add_leases() = held->lease;
      }
      request.set_executor_id(executor_id_);
      generation = generation_;
    }
    // Idle slots are polling Lease, which carries drain and reregister too.
    if (request.leases().empty()) continue;

    ptxbench::v1::HeartbeatResponse response;
    grpc::Status status;
    {
      TrackedContext ctx(this, options_.rpc_timeout, /*is_poll=*/false);
      status = stub_->Heartbeat(ctx.get(), request, &response);
    }
    if (!status.ok()) {
      if (!stopping()) {
        LogWarning("heartbeat failed",
                   {{"leases", absl::StrCat(request.leases_size())}, {"error", ErrorText(status)}});
      }
      continue;
    }
    {
      absl::MutexLock lock(&mu_);
      for (const LeaseRef& revoked : response.revoked()) {
        auto it = held_.find(revoked.task_id());
        if (it == held_.end() || it->second->lease.lease_id() != revoked.lease_id()) continue;
        it->second->revoked = true;
        it->second->cancelled = true;
        LogWarning("lease revoked",
                   {{"task_id", revoked.task_id()}, {"lease_id", revoked.lease_id()}});
      }
    }
    if (response.drain()) SetDraining("heartbeat");
    if (response.reregister()) {
      LogInfo("scheduler asked to re-register", {{"executor_id", request.executor_id()}});
      absl::Status s = Register(generation);
      if (!s.ok() && !stopping()) Fail(s);
    }
  }
}

}  // namespace ptxbench::executor
