#include "scheduler/api/access.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "auth/token.h"
#include "common/log.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

const std::vector<RpcAccess>& AccessTable() {
  // Roles include the ones above them: submit may do what read may, admin
  // anything. Executors (worker, gateway) may do nothing but their part of
  // the lease protocol; readers see everything but change nothing.
  static const std::vector<v1::Role> kRead = {v1::ROLE_ADMIN, v1::ROLE_SUBMIT, v1::ROLE_READ};
  static const std::vector<v1::Role> kSubmit = {v1::ROLE_ADMIN, v1::ROLE_SUBMIT};
  static const std::vector<v1::Role> kAdmin = {v1::ROLE_ADMIN};
  static const std::vector<v1::Role> kExecutor = {v1::ROLE_ADMIN, v1::ROLE_WORKER,
                                                  v1::ROLE_GATEWAY};
  // A model's call permits: only what calls a provider may spend its limits.
  static const std::vector<v1::Role> kGateway = {v1::ROLE_ADMIN, v1::ROLE_GATEWAY};
  static const std::vector<RpcAccess>* table = new std::vector<RpcAccess>{
      {"ClientService", "SubmitExperiment", kSubmit},
      {"ClientService", "SubmitEval", kSubmit},
      {"ClientService", "GetExperiment", kRead},
      {"ClientService", "ListExperiments", kRead},
      {"ClientService", "ListTrajectories", kRead},
      {"ClientService", "GetTrajectory", kRead},
      {"ClientService", "ReadTrajectories", kRead},
      {"ClientService", "GetReport", kRead},
      {"ClientService", "GetDefinitions", kRead},
      {"ClientService", "WatchExperiment", kRead},
      {"ClientService", "Cancel", kSubmit},
      {"ClientService", "Retry", kSubmit},
      {"ClientService", "Extend", kSubmit},
      {"ClientService", "ListExecutors", kRead},
      // Draining takes capacity away from everyone's experiments.
      {"ClientService", "Drain", kAdmin},
      {"ClientService", "WhoAmI", {}},
      {"ClientService", "CreateToken", kAdmin},
      {"ClientService", "ListTokens", kAdmin},
      {"ClientService", "RevokeToken", kAdmin},
      {"ClientService", "RecordStageManifest", kSubmit},
      {"ClientService", "ListStageManifests", kRead},
      {"ExecutorService", "Register", kExecutor},
      {"ExecutorService", "Lease", kExecutor},
      {"ExecutorService", "Heartbeat", kExecutor},
      {"ExecutorService", "Complete", kExecutor},
      {"ExecutorService", "AgentEval", kExecutor},
      {"ExecutorService", "Leave", kExecutor},
      {"ExecutorService", "AcquireCallPermit", kGateway},
      {"ExecutorService", "ReleaseCallPermit", kGateway},
      {"ExecutorService", "RenewCallPermits", kGateway},
  };
  return *table;
}

Access::Access(const auth::Authenticator* authenticator) : authenticator_(authenticator) {
  for (const RpcAccess& rpc : AccessTable()) by_method_[rpc.method] = &rpc;
}

absl::StatusOr<auth::Principal> Access::Check(const grpc::CallbackServerContext* ctx,
                                              absl::string_view method) const {
  absl::StatusOr<auth::Principal> who = Check(ctx->client_metadata(), method);
  if (!who.ok()) {
    // Who knocked, for whoever watches the log; the message names a token
    // by its name at most, never by itself.
    LogWarning("call refused", {{"rpc", std::string(method)},
                                {"peer", ctx->peer()},
                                {"code", absl::StatusCodeToString(who.status().code())},
                                {"why", std::string(who.status().message())}});
  }
  return who;
}

absl::StatusOr<auth::Principal> Access::Check(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
    absl::string_view method) const {
  absl::StatusOr<auth::Principal> who = authenticator_->Authenticate(metadata);
  if (!who.ok()) return who;
  auto it = by_method_.find(method);
  // An RPC missing from the table is refused to everyone: a new RPC is
  // closed until someone decides who may call it.
  if (it == by_method_.end()) {
    return absl::PermissionDeniedError(absl::StrCat(method, " is not open to any role"));
  }
  const std::vector<v1::Role>& roles = it->second->roles;
  if (roles.empty() || std::find(roles.begin(), roles.end(), who->role) != roles.end()) {
    return who;
  }
  return absl::PermissionDeniedError(absl::StrCat(
      method, " needs a token of role ",
      absl::StrJoin(roles, " or ",
                    [](std::string* out, v1::Role r) { out->append(auth::RoleName(r)); }),
      "; token '", who->name, "' has role ", auth::RoleName(who->role)));
}

absl::Status Access::CheckExecutorKind(const auth::Principal& who, v1::ExecutorKind kind) {
  if ((who.role == v1::ROLE_WORKER && kind != v1::WORKER) ||
      (who.role == v1::ROLE_GATEWAY && kind != v1::GATEWAY)) {
    return absl::PermissionDeniedError(
        absl::StrCat("token '", who.name, "' of role ", auth::RoleName(who.role),
                     " may only register a ", auth::RoleName(who.role)));
  }
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
