#include "scheduler/state/dispatcher.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {
// The kinds a Lease asks for (checked to be known): empty is any.
std::set<StepKind> KindsOf(const v1::LeaseRequest& request) {
  std::set<StepKind> kinds;
  for (int kind : request.kinds()) kinds.insert(static_cast<StepKind>(kind));
  return kinds;
}
}  // namespace

Dispatcher::Dispatcher(std::unique_ptr<storage::Database> db, Clock* clock,
                       DispatcherOptions options)
    : clock_(clock),
      options_(options),
      db_(db.get()),
      queue_(std::move(db),
             storage::WriteQueue::Options{options.max_batch, options.tick, /*sync_wal=*/true}),
      core_(db_, clock, options.core) {}

Dispatcher::~Dispatcher() { Stop(); }

void Dispatcher::FatalIfBroken(const absl::Status& status) {
  // Core validates before it mutates: the codes below are the caller's
  // mistakes and changed nothing. Anything else came from the database after
  // memory was changed; memory is now ahead of disk, so the only safe move is
  // to stop and let a restart recover from the database.
  switch (status.code()) {
    case absl::StatusCode::kOk:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    // An executor acting as another, or on another's lease: refused before
    // anything changed (Core::CheckOwner, Core::Complete).
    case absl::StatusCode::kPermissionDenied:
      return;
    default:
      LogError("state transition failed after changing memory; stopping to recover",
               {{"error", status.ToString()}});
      std::abort();
  }
}

absl::Status Dispatcher::Start() {
  // Load runs before the writer thread exists, on this thread, in one
  // read transaction of the write connection.
  PTXB_RETURN_IF_ERROR(db_->Execute("BEGIN"));
  absl::Status loaded = core_.Load();
  PTXB_RETURN_IF_ERROR(db_->Execute(loaded.ok() ? "COMMIT" : "ROLLBACK"));
  PTXB_RETURN_IF_ERROR(loaded);
  // From here on the Core runs only on the writer thread, and checks it.
  core_.BindToWriterThread(&queue_);
  queue_.SetHook([this](storage::Database&) { OnBatch(); });
  queue_.Start();
  return absl::OkStatus();
}

void Dispatcher::Stop() {
  queue_.Post(
      [this](storage::Database&) {
        for (Waiter& w : waiters_) w.done(v1::LeaseResponse());
        waiters_.clear();
        for (AgentWaiter& w : agent_waiters_) {
          w.done(absl::UnavailableError("the scheduler is stopping; ask again"));
        }
        agent_waiters_.clear();
        return absl::OkStatus();
      },
      nullptr);
  queue_.Stop();
}

absl::Status Dispatcher::StopLeasing() {
  return queue_.RunSync([this](storage::Database&) {
    core_.StopLeasing();
    return absl::OkStatus();
  });
}

absl::StatusOr<SchedulerGauges> Dispatcher::Gauges() {
  SchedulerGauges gauges;
  PTXB_RETURN_IF_ERROR(queue_.RunSync([this, &gauges](storage::Database&) {
    gauges = core_.Gauges();
    return absl::OkStatus();
  }));
  return gauges;
}

absl::StatusOr<v1::LeaseResponse> Dispatcher::LeaseNow(const v1::LeaseRequest& request) {
  v1::LeaseResponse response;
  if (!core_.IsKnownExecutor(request.executor_id())) {
    response.set_reregister(true);
    return response;
  }
  if (core_.IsDraining(request.executor_id())) {
    response.set_drain(true);
    return response;
  }
  for (int kind : request.kinds()) {
    if (kind < v1::LLM || kind > v1::AGENT) {
      return absl::InvalidArgumentError(absl::StrCat("unknown task kind ", kind));
    }
  }
  PTXB_ASSIGN_OR_RETURN(std::optional<v1::Task> task,
                        core_.TryLease(request.executor_id(), KindsOf(request)));
  if (task.has_value()) *response.mutable_task() = std::move(*task);
  return response;
}

void Dispatcher::Lease(const v1::LeaseRequest& request, const std::string& owner,
                       std::shared_ptr<std::atomic<bool>> cancelled,
                       Callback<v1::LeaseResponse> done) {
  // Read here, not on the writer thread: the wait in the write queue counts.
  const absl::Time asked = clock_->Now();
  auto reply = std::make_shared<std::optional<absl::StatusOr<v1::LeaseResponse>>>();
  auto parked = std::make_shared<bool>(false);
  queue_.Post(
      [this, request, owner, cancelled, done, reply, parked,
       asked](storage::Database&) -> absl::Status {
        if (absl::Status mine = core_.CheckOwner(request.executor_id(), owner); !mine.ok()) {
          *reply = mine;
          return absl::OkStatus();
        }
        absl::StatusOr<v1::LeaseResponse> now = LeaseNow(request);
        FatalIfBroken(now.status());
        *reply = now;
        if (!now.ok()) return now.status();
        absl::Duration wait =
            std::min(absl::Milliseconds(request.wait_ms()), options_.core.max_lease_wait);
        if (now->has_task() || now->drain() || now->reregister() ||
            wait <= absl::ZeroDuration()) {
          return absl::OkStatus();
        }
        waiters_.push_back(Waiter{request.executor_id(), KindsOf(request), asked,
                                  clock_->Now() + wait, cancelled, done});
        *parked = true;
        return absl::OkStatus();
      },
      [this, reply, parked, done, asked](absl::Status) {
        if (*parked) return;
        if ((*reply)->ok() && (**reply)->has_task()) GrantedAfter(asked);
        done(std::move(**reply));
      });
}

void Dispatcher::Complete(const v1::CompleteRequest& request, const std::string& owner,
                          Callback<v1::CompleteResponse> done) {
  const absl::Time asked = clock_->Now();
  auto reply = std::make_shared<absl::StatusOr<v1::CompleteResponse>>(
      absl::UnknownError("not run"));
  // By address: a report carries the model's answer or the evaluation's logs,
  // and the caller keeps it until `done` (an RPC's own request does).
  queue_.Post(
      [this, req = &request, owner, reply](storage::Database&) -> absl::Status {
        const v1::CompleteRequest& request = *req;
        absl::Status status = core_.CheckOwner(request.executor_id(), owner);
        if (status.ok()) status = core_.Complete(request);
        FatalIfBroken(status);
        if (!status.ok()) {
          *reply = status;
          return status;
        }
        v1::CompleteResponse response;
        if (request.has_next()) {
          v1::LeaseRequest next = request.next();
          next.set_executor_id(request.executor_id());
          absl::StatusOr<v1::LeaseResponse> now = LeaseNow(next);
          FatalIfBroken(now.status());
          // A bad `next` (an unknown kind) refuses only the lease: the
          // outcome is accepted and stays.
          if (now.ok()) *response.mutable_next() = std::move(*now);
        }
        *reply = std::move(response);
        return absl::OkStatus();
      },
      [this, reply, done, asked](absl::Status) {
        if (reply->ok() && (*reply)->next().has_task()) GrantedAfter(asked);
        done(std::move(*reply));
      });
}

void Dispatcher::GrantedAfter(absl::Time asked) {
  lease_wait_seconds_.ObserveDuration(clock_->Now() - asked);
}

void Dispatcher::AgentEval(const v1::AgentEvalRequest& request, const std::string& owner,
                           std::shared_ptr<std::atomic<bool>> cancelled,
                           Callback<v1::AgentEvalResponse> done) {
  auto reply = std::make_shared<std::optional<absl::StatusOr<v1::AgentEvalResponse>>>();
  auto parked = std::make_shared<bool>(false);
  queue_.Post(
      [this, request, owner, cancelled, done, reply, parked](storage::Database&) -> absl::Status {
        if (absl::Status mine = core_.CheckOwner(request.executor_id(), owner); !mine.ok()) {
          *reply = mine;
          return absl::OkStatus();
        }
        absl::StatusOr<v1::AgentEvalResponse> result = core_.AgentEval(request);
        FatalIfBroken(result.status());
        const absl::Duration wait =
            std::min(absl::Milliseconds(request.wait_ms()), options_.core.max_lease_wait);
        if (!result.ok() || result->done() || wait <= absl::ZeroDuration()) {
          *reply = result;
          return result.status();
        }
        agent_waiters_.push_back(AgentWaiter{request, clock_->Now() + wait, cancelled, done});
        *parked = true;
        return absl::OkStatus();
      },
      [reply, parked, done](absl::Status) {
        if (*parked) return;
        done(std::move(**reply));
      });
}

void Dispatcher::PostServe(
    bool* posted, std::function<absl::Status(std::vector<std::function<void()>>*)> serve) {
  *posted = true;
  auto replies = std::make_shared<std::vector<std::function<void()>>>();
  queue_.Post(
      [posted, serve = std::move(serve), replies](storage::Database&) {
        *posted = false;
        absl::Status status = serve(replies.get());
        FatalIfBroken(status);
        return status;
      },
      [replies](absl::Status) {
        for (auto& reply : *replies) reply();
      });
}

void Dispatcher::OnBatch() {
  FatalIfBroken(core_.Tick());
  const absl::Time now = clock_->Now();
  // Grants write to the database, and an ended evaluation was written in
  // this batch, so replies must wait for a commit: each kind of waiter is
  // served in an op of its own, whose replies go out after its batch.
  if (!waiters_.empty() && !serve_posted_) {
    bool due = core_.ReadyGeneration() != served_generation_;
    for (const Waiter& w : waiters_) {
      if (due) break;
      due = w.deadline <= now || w.cancelled->load();
    }
    if (due) PostServe(&serve_posted_, [this](auto* replies) { return ServeWaiters(replies); });
  }
  if (!agent_waiters_.empty() && !agent_serve_posted_) {
    bool due = core_.AgentEvalGeneration() != served_agent_generation_;
    for (const AgentWaiter& w : agent_waiters_) {
      if (due) break;
      due = w.deadline <= now || w.cancelled->load();
    }
    if (due) {
      PostServe(&agent_serve_posted_,
                [this](auto* replies) { return ServeAgentWaiters(replies); });
    }
  }
}

absl::Status Dispatcher::ServeAgentWaiters(std::vector<std::function<void()>>* replies) {
  const absl::Time now = clock_->Now();
  served_agent_generation_ = core_.AgentEvalGeneration();
  std::deque<AgentWaiter> still_waiting;
  while (!agent_waiters_.empty()) {
    AgentWaiter w = std::move(agent_waiters_.front());
    agent_waiters_.pop_front();
    if (w.cancelled->load()) {
      replies->push_back([done = std::move(w.done)] {
        done(absl::CancelledError("the caller went away"));
      });
      continue;
    }
    // A repeat of the request that made the turn: it reads, it writes
    // nothing (and refuses once the lease is gone).
    absl::StatusOr<v1::AgentEvalResponse> result = core_.AgentEval(w.request);
    FatalIfBroken(result.status());
    if (!result.ok() || result->done() || w.deadline <= now) {
      replies->push_back([done = std::move(w.done), result = std::move(result)]() mutable {
        done(std::move(result));
      });
      continue;
    }
    still_waiting.push_back(std::move(w));
  }
  agent_waiters_ = std::move(still_waiting);
  return absl::OkStatus();
}

absl::Status Dispatcher::ServeWaiters(std::vector<std::function<void()>>* replies) {
  const absl::Time now = clock_->Now();
  served_generation_ = core_.ReadyGeneration();
  std::deque<Waiter> still_waiting;
  while (!waiters_.empty()) {
    Waiter w = std::move(waiters_.front());
    waiters_.pop_front();
    if (w.cancelled->load()) {
      replies->push_back([done = std::move(w.done)] {
        done(absl::CancelledError("the caller went away"));
      });
      continue;
    }
    v1::LeaseResponse response;
    if (core_.IsDraining(w.executor_id) || !core_.IsKnownExecutor(w.executor_id)) {
      response.set_drain(core_.IsDraining(w.executor_id));
      response.set_reregister(!core_.IsKnownExecutor(w.executor_id));
    } else if (core_.ReadyCount() > 0) {
      PTXB_ASSIGN_OR_RETURN(std::optional<v1::Task> task, core_.TryLease(w.executor_id, w.kinds));
      if (task) *response.mutable_task() = std::move(*task);
    }
    if (response.has_task() || response.drain() || response.reregister() || w.deadline <= now) {
      replies->push_back([this, done = std::move(w.done), response = std::move(response),
                          asked = w.asked]() mutable {
        if (response.has_task()) GrantedAfter(asked);
        done(std::move(response));
      });
      continue;
    }
    still_waiting.push_back(std::move(w));
  }
  waiters_ = std::move(still_waiting);
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
