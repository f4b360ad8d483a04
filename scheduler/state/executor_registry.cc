#include "scheduler/state/executor_registry.h"

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {
// The executors table's draining column: 0 running, 1 draining, 2 stopped
// (it said goodbye; kept across restarts so it is not shown lost).
constexpr int64_t kDrainingStopped = 2;
}  // namespace

absl::Status ExecutorRegistry::Load(absl::Time now) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT id, kind, name, capabilities, registered_ms, draining, owner FROM executors"));
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    Executor& e = executors_[s->ColumnText(0)];
    e.info.set_executor_id(s->ColumnText(0));
    e.info.set_kind(static_cast<v1::ExecutorKind>(s->ColumnInt64(1)));
    e.info.set_name(s->ColumnText(2));
    e.info.mutable_capabilities()->ParseFromString(s->ColumnBlob(3));
    e.info.set_registered_unix_ms(s->ColumnInt64(4));
    e.info.set_draining(s->ColumnInt64(5) != 0);
    e.stopped = s->ColumnInt64(5) == kDrainingStopped;
    e.info.set_last_seen_unix_ms(absl::ToUnixMillis(now));  // grace after restart
    e.owner = s->ColumnText(6);
  }
  s->Reset();
  return absl::OkStatus();
}

absl::StatusOr<v1::RegisterResponse> ExecutorRegistry::Register(
    const v1::RegisterRequest& request, const std::string& owner, absl::Time now) {
  if (request.kind() != v1::WORKER && request.kind() != v1::GATEWAY) {
    return absl::InvalidArgumentError("register: kind must be WORKER or GATEWAY");
  }
  std::string id = request.executor_id();
  if (id.empty()) {
    absl::BitGen gen;
    id = absl::StrFormat("%s_%012x", request.kind() == v1::WORKER ? "wk" : "gw",
                         absl::Uniform<uint64_t>(gen) & 0xffffffffffffULL);
  }
  // One registered before tokens existed (owner "") is claimed by the first
  // token that registers it again.
  if (const Executor* known = Find(id); known != nullptr && !known->owner.empty()) {
    PTXB_RETURN_IF_ERROR(CheckOwner(id, owner));
  }
  Executor& e = executors_[id];
  e.owner = owner;
  // One that said goodbye and comes back (a restarted worker keeping its id)
  // is running again; an admin's drain, though, outlives a restart.
  if (e.stopped) {
    e.stopped = false;
    e.info.set_draining(false);
  }
  const bool draining = e.info.draining();
  e.info.set_executor_id(id);
  e.info.set_kind(request.kind());
  e.info.set_name(request.name());
  *e.info.mutable_capabilities() = request.capabilities();
  if (e.info.registered_unix_ms() == 0) e.info.set_registered_unix_ms(absl::ToUnixMillis(now));
  e.info.set_last_seen_unix_ms(absl::ToUnixMillis(now));
  e.info.set_draining(draining);
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("INSERT INTO executors(id, kind, name, capabilities, registered_ms, draining, "
                  "owner) VALUES(?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET kind = "
                  "excluded.kind, name = excluded.name, capabilities = excluded.capabilities, "
                  "draining = excluded.draining, owner = excluded.owner"));
  s->BindText(1, id)
      .BindInt64(2, request.kind())
      .BindText(3, request.name())
      .BindBlob(4, request.capabilities().SerializeAsString())
      .BindInt64(5, e.info.registered_unix_ms())
      .BindBool(6, draining)
      .BindText(7, owner);
  PTXB_RETURN_IF_ERROR(s->Run());
  v1::RegisterResponse response;
  response.set_executor_id(id);
  response.set_lease_ttl_ms(absl::ToInt64Milliseconds(options_.lease_ttl));
  response.set_heartbeat_interval_ms(absl::ToInt64Milliseconds(options_.heartbeat_interval));
  return response;
}

absl::Status ExecutorRegistry::CheckOwner(const std::string& executor_id,
                                         const std::string& owner) const {
  auto it = executors_.find(executor_id);
  if (it == executors_.end() || it->second.owner == owner) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(
      absl::StrCat("executor ", executor_id, " is registered under another token; a token may "
                   "only act as the executors it registered"));
}

absl::Status ExecutorRegistry::Drain(const std::string& executor_id) {
  Executor* e = Find(executor_id);
  if (e == nullptr) return absl::NotFoundError(absl::StrCat("unknown executor '", executor_id, "'"));
  return e->stopped ? absl::OkStatus() : SetDraining(*e, 1);
}

absl::Status ExecutorRegistry::MarkStopped(const std::string& executor_id) {
  Executor* e = Find(executor_id);
  if (e == nullptr) return absl::NotFoundError(absl::StrCat("unknown executor '", executor_id, "'"));
  PTXB_RETURN_IF_ERROR(SetDraining(*e, kDrainingStopped));
  e->stopped = true;
  return absl::OkStatus();
}

absl::Status ExecutorRegistry::SetDraining(Executor& e, int64_t value) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("UPDATE executors SET draining = ? WHERE id = ?"));
  s->BindInt64(1, value).BindText(2, e.info.executor_id());
  PTXB_RETURN_IF_ERROR(s->Run());
  e.info.set_draining(true);
  return absl::OkStatus();
}

void ExecutorRegistry::OwnerRevoked(const std::string& owner) {
  for (auto& [id, e] : executors_) {
    if (e.owner == owner) e.owner_revoked = true;
  }
}

ExecutorRegistry::Executor* ExecutorRegistry::Find(const std::string& executor_id) {
  auto it = executors_.find(executor_id);
  return it == executors_.end() ? nullptr : &it->second;
}

const ExecutorRegistry::Executor* ExecutorRegistry::Find(const std::string& executor_id) const {
  auto it = executors_.find(executor_id);
  return it == executors_.end() ? nullptr : &it->second;
}

bool ExecutorRegistry::IsKnown(const std::string& executor_id) const {
  return executors_.count(executor_id) > 0;
}

bool ExecutorRegistry::IsDraining(const std::string& executor_id) const {
  auto it = executors_.find(executor_id);
  return it != executors_.end() && it->second.info.draining();
}

std::string ExecutorRegistry::Status(const Executor& e, absl::Time now) const {
  if (e.stopped) return "stopped";
  if (absl::ToUnixMillis(now) - e.info.last_seen_unix_ms() >
      absl::ToInt64Milliseconds(options_.lost_after)) {
    return "lost";
  }
  return e.info.draining() ? "draining" : "active";
}

std::vector<v1::ExecutorInfo> ExecutorRegistry::List(absl::Time now) const {
  std::vector<v1::ExecutorInfo> out;
  for (const auto& [id, e] : executors_) {
    v1::ExecutorInfo info = e.info;
    info.set_leases(static_cast<int32_t>(e.tasks.size()));
    info.set_status(Status(e, now));
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace ptxbench::scheduler
