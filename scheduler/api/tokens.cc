// The token RPCs of ClientService (WhoAmI, CreateToken, ListTokens,
// RevokeToken) and the admin token of the data directory.

#include "scheduler/api/tokens.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "auth/token.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "scheduler/api/service.h"
#include "scheduler/state/finish.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

grpc::ServerUnaryReactor* ClientServiceImpl::WhoAmI(grpc::CallbackServerContext* ctx,
                                                    const v1::WhoAmIRequest*,
                                                    v1::WhoAmIResponse* response) {
  absl::StatusOr<auth::Principal> who = deps_.access->Check(ctx, "WhoAmI");
  if (!who.ok()) return Refuse(ctx, who.status());
  response->set_name(who->name);
  response->set_role(who->role);
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* ClientServiceImpl::CreateToken(grpc::CallbackServerContext* ctx,
                                                         const v1::CreateTokenRequest* request,
                                                         v1::CreateTokenResponse* response) {
  absl::StatusOr<auth::Principal> who = deps_.access->Check(ctx, "CreateToken");
  if (!who.ok()) return Refuse(ctx, who.status());
  struct Created {
    v1::TokenInfo info;
    std::string hash;
  };
  // Made here, off the writer thread; only its hash is stored.
  auto token = std::make_shared<std::string>(auth::GenerateToken());
  v1::TokenInfo info;
  info.set_name(request->name());
  info.set_role(request->role());
  info.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  info.set_created_by(who->name);
  return Dispatch<Created, v1::CreateTokenResponse>(
      ctx, deps_.dispatcher, response,
      [info, hash = auth::TokenHash(*token)](Core& core) mutable -> absl::StatusOr<Created> {
        if (info.name().empty()) {
          PTXB_ASSIGN_OR_RETURN(*info.mutable_name(), core.tokens().DefaultName(info.role()));
        }
        PTXB_RETURN_IF_ERROR(core.tokens().Insert(info, hash));
        return Created{info, hash};
      },
      [this, token](Created& created, v1::CreateTokenResponse* out) {
        deps_.authenticator->Add(created.hash, {created.info.name(), created.info.role()});
        LogInfo("token created", {{"name", created.info.name()},
                                  {"role", auth::RoleName(created.info.role())},
                                  {"by", created.info.created_by()}});
        *out->mutable_info() = created.info;
        out->set_token(*token);
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::ListTokens(grpc::CallbackServerContext* ctx,
                                                        const v1::ListTokensRequest*,
                                                        v1::ListTokensResponse* response) {
  if (absl::Status denied = Deny(ctx, "ListTokens"); !denied.ok()) return Refuse(ctx, denied);
  using List = std::vector<v1::TokenInfo>;
  return Dispatch<List, v1::ListTokensResponse>(
      ctx, deps_.dispatcher, response, [](Core& core) { return core.tokens().List(); },
      [](List& list, v1::ListTokensResponse* out) {
        for (v1::TokenInfo& t : list) *out->add_tokens() = std::move(t);
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::RevokeToken(grpc::CallbackServerContext* ctx,
                                                         const v1::RevokeTokenRequest* request,
                                                         v1::RevokeTokenResponse* response) {
  absl::StatusOr<auth::Principal> who = deps_.access->Check(ctx, "RevokeToken");
  if (!who.ok()) return Refuse(ctx, who.status());
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  return Dispatch<v1::TokenInfo, v1::RevokeTokenResponse>(
      ctx, deps_.dispatcher, response,
      [name = request->name(), now_ms](Core& core) { return core.RevokeToken(name, now_ms); },
      [this, by = who->name](v1::TokenInfo& info, v1::RevokeTokenResponse* out) {
        deps_.authenticator->Remove(info.name());
        LogInfo("token revoked", {{"name", info.name()}, {"by", by}});
        *out->mutable_info() = info;
      });
}

absl::Status LoadTokens(TokenStore& store, auth::Authenticator& authenticator) {
  return store.ForEachValid([&](const v1::TokenInfo& info, const std::string& hash) {
    authenticator.Add(hash, {info.name(), info.role()});
  });
}

absl::Status EnsureAdminToken(TokenStore& store, const std::string& data_dir, absl::Time now) {
  const std::string path = (std::filesystem::path(data_dir) / auth::kAdminTokenFile).string();
  if (std::filesystem::exists(path)) {
    absl::StatusOr<std::string> token = auth::ReadTokenFile(path);
    PTXB_ASSIGN_OR_RETURN(std::string hash, store.ValidHash(kAdminTokenName));
    if (token.ok() && !hash.empty() && auth::TokenHash(*token) == hash) return absl::OkStatus();
    // Unreadable, readable by others, or not the admin token any more: a
    // new one replaces it, and whatever the old file held stops working.
    LogWarning("admin token file replaced",
               {{"path", path},
                {"why", token.ok() ? std::string("it is not the current admin token")
                                   : std::string(token.status().message())}});
  }
  const std::string token = auth::GenerateToken();
  v1::TokenInfo info;
  info.set_name(kAdminTokenName);
  info.set_role(v1::ROLE_ADMIN);
  info.set_created_unix_ms(absl::ToUnixMillis(now));
  PTXB_RETURN_IF_ERROR(store.Replace(info, auth::TokenHash(token)));
  PTXB_RETURN_IF_ERROR(auth::WriteTokenFile(path, token));
  LogInfo("admin token written", {{"path", path}});
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
