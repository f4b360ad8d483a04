#include "agent_gateway/models/call_permits.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/log.h"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;

// The most Acquire sleeps before it asks `give_up` again.
constexpr absl::Duration kGiveUpPoll = absl::Milliseconds(200);
// The permits' thread wakes at least this often to see whether a renewal
// is due.
constexpr absl::Duration kRenewCheck = absl::Milliseconds(500);
// Not registered yet: ask again soon.
constexpr absl::Duration kUnregisteredWait = absl::Milliseconds(200);

std::chrono::system_clock::time_point Deadline(absl::Duration d) {
  return std::chrono::system_clock::now() + absl::ToChronoMilliseconds(d);
}

// Worth asking again: the scheduler is out of reach, restarting, or busy.
bool Transient(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::DEADLINE_EXCEEDED ||
         code == grpc::StatusCode::ABORTED || code == grpc::StatusCode::RESOURCE_EXHAUSTED ||
         code == grpc::StatusCode::CANCELLED || code == grpc::StatusCode::INTERNAL ||
         code == grpc::StatusCode::UNKNOWN;
}

}  // namespace

absl::StatusOr<CallPermits::Permit> CallPermits::Acquire(const std::string& model,
                                                         int64_t tokens,
                                                         const std::function<bool()>& give_up) {
  for (;;) {
    if (give_up()) return absl::CancelledError("gave up waiting for the model's limits");
    absl::StatusOr<Grant> grant = TryAcquire(model, tokens);
    if (!grant.ok()) return grant.status();
    if (grant->granted) return grant->permit;
    absl::Time until = absl::Now() + std::max(grant->wait, absl::Milliseconds(1));
    while (absl::Now() < until) {
      if (give_up()) return absl::CancelledError("gave up waiting for the model's limits");
      absl::SleepFor(std::min(until - absl::Now(), kGiveUpPoll));
    }
  }
}

LocalCallPermits::LocalCallPermits(const std::map<std::string, RateLimits>& limits,
                                   const Clock* clock)
    : clock_(clock) {
  absl::MutexLock lock(&mu_);
  for (const auto& [model, l] : limits) limits_[model] = std::make_unique<CallLimits>(l, clock_);
}

CallLimits* LocalCallPermits::For(const std::string& model) {
  absl::MutexLock lock(&mu_);
  std::unique_ptr<CallLimits>& l = limits_[model];
  if (l == nullptr) l = std::make_unique<CallLimits>(RateLimits{}, clock_);
  return l.get();
}

absl::StatusOr<CallPermits::Grant> LocalCallPermits::TryAcquire(const std::string& model,
                                                                int64_t tokens) {
  Grant grant;
  CallLimits::Permit inner;
  grant.granted = For(model)->TryAcquire(tokens, &inner, &grant.wait);
  grant.permit.id = inner.id;
  return grant;
}

void LocalCallPermits::Release(const std::string& model, const Permit& permit, int64_t billed) {
  For(model)->Release({permit.id}, billed);
}

SchedulerCallPermits::SchedulerCallPermits(Options options)
    : options_(std::move(options)),
      stub_(v1::ExecutorService::NewStub(
          auth::NewChannel(options_.scheduler_address, options_.security))),
      backoff_(options_.initial_backoff, options_.max_backoff) {
  loop_ = std::thread([this] { Loop(); });
}

SchedulerCallPermits::~SchedulerCallPermits() { Stop(); }

void SchedulerCallPermits::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  loop_.join();
}

absl::StatusOr<CallPermits::Grant> SchedulerCallPermits::TryAcquire(const std::string& model,
                                                                    int64_t tokens) {
  Grant grant;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      grant.wait = kUnregisteredWait;
      return grant;
    }
  }
  const std::string executor_id = options_.executor_id ? options_.executor_id() : "";
  if (executor_id.empty()) {
    grant.wait = kUnregisteredWait;
    return grant;
  }
  v1::AcquireCallPermitRequest request;
  request.set_executor_id(executor_id);
  request.set_model(model);
  request.set_tokens(tokens);
  if (auto it = options_.limits.find(model); it != options_.limits.end()) {
    request.mutable_limits()->set_rpm(it->second.rpm);
    request.mutable_limits()->set_tpm(it->second.tpm);
    request.mutable_limits()->set_concurrency(it->second.concurrency);
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(options_.rpc_timeout));
  v1::AcquireCallPermitResponse response;
  const grpc::Status status = stub_->AcquireCallPermit(&ctx, request, &response);
  absl::MutexLock lock(&mu_);
  if (!status.ok()) {
    if (!Transient(status.error_code())) {
      return absl::Status(FromGrpcStatus(status).code(),
                          absl::StrCat("the scheduler refused a call permit for ", model, ": ",
                                       status.error_message()));
    }
    if (!unreachable_) {
      unreachable_ = true;
      LogWarning("no call permit: the scheduler did not answer; calls wait for it",
                 {{"model", model}, {"error", status.error_message()}});
    }
    grant.wait = backoff_.Next();
    return grant;
  }
  if (unreachable_) {
    unreachable_ = false;
    LogInfo("call permits: the scheduler answers again", {{"model", model}});
  }
  backoff_.Reset();
  if (response.permit_ttl_ms() > 0) ttl_ = absl::Milliseconds(response.permit_ttl_ms());
  if (response.permit_id() == 0) {
    grant.wait = absl::Milliseconds(std::max<int64_t>(1, response.wait_ms()));
    return grant;
  }
  held_.insert(response.permit_id());
  grant.granted = true;
  grant.permit.id = response.permit_id();
  return grant;
}

void SchedulerCallPermits::Release(const std::string&, const Permit& permit, int64_t billed) {
  absl::MutexLock lock(&mu_);
  if (held_.erase(permit.id) == 0) return;  // never ours, or released already
  releases_.push_back({permit.id, billed, absl::Now()});
}


void SchedulerCallPermits::Loop() {
  absl::Time last_renew = absl::Now();
  executor::Backoff backoff(options_.initial_backoff, options_.max_backoff);
  for (;;) {
    std::vector<Pending> releases;
    std::vector<uint64_t> renew;
    std::string executor_id;
    absl::Duration ttl;
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !releases_.empty();
      };
      // A few renewals per TTL, so one lost does not expire a permit. The
      // TTL is the scheduler's (its first grant says it): look again at
      // least every kRenewCheck.
      mu_.AwaitWithDeadline(absl::Condition(&work),
                            std::min(last_renew + ttl_ / 6, absl::Now() + kRenewCheck));
      stopping = stopping_;
      releases.assign(releases_.begin(), releases_.end());
      releases_.clear();
      ttl = ttl_;
      if (absl::Now() >= last_renew + ttl_ / 6) {
        renew.assign(held_.begin(), held_.end());
        last_renew = absl::Now();
      }
    }
    if (!releases.empty() || !renew.empty()) {
      executor_id = options_.executor_id ? options_.executor_id() : "";
    }
    std::vector<Pending> retry;
    for (const Pending& p : releases) {
      v1::ReleaseCallPermitRequest request;
      request.set_executor_id(executor_id);
      request.set_permit_id(p.id);
      request.set_billed_tokens(p.billed);
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline(stopping ? absl::Seconds(1) : options_.rpc_timeout));
      v1::ReleaseCallPermitResponse response;
      const grpc::Status status = stub_->ReleaseCallPermit(&ctx, request, &response);
      if (status.ok()) continue;
      // Out of reach: keep it until it would have expired anyway.
      if (Transient(status.error_code()) && !stopping && absl::Now() - p.queued < ttl) {
        retry.push_back(p);
        continue;
      }
      LogWarning("a call permit's release was refused",
                 {{"permit", std::to_string(p.id)}, {"error", status.error_message()}});
    }
    if (!renew.empty() && !executor_id.empty() && !stopping) {
      v1::RenewCallPermitsRequest request;
      request.set_executor_id(executor_id);
      for (uint64_t id : renew) request.add_permit_ids(id);
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline(options_.rpc_timeout));
      v1::RenewCallPermitsResponse response;
      const grpc::Status status = stub_->RenewCallPermits(&ctx, request, &response);
      if (!status.ok()) {
        LogWarning("call permits not renewed", {{"permits", std::to_string(renew.size())},
                                                {"error", status.error_message()}});
      } else if (response.unknown_size() > 0) {
        LogWarning("call permits unknown to the scheduler (expired, or it restarted): their calls "
                   "run unaccounted",
                   {{"permits", std::to_string(response.unknown_size())}});
        absl::MutexLock lock(&mu_);
        for (uint64_t id : response.unknown()) held_.erase(id);  // renewing them is moot
      }
    }
    if (stopping) return;
    if (!retry.empty()) {
      absl::SleepFor(backoff.Next());
      absl::MutexLock lock(&mu_);
      releases_.insert(releases_.begin(), retry.begin(), retry.end());
    } else {
      backoff.Reset();
    }
  }
}

}  // namespace ptxbench::agent_gateway
