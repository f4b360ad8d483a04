#include "scheduler/store/token_store.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "auth/token.h"
#include "common/status_macros.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {

constexpr char kColumns[] = "name, role, created_ms, revoked_ms, created_by";

v1::TokenInfo ReadInfo(const storage::Statement& s) {
  v1::TokenInfo info;
  info.set_name(s.ColumnText(0));
  info.set_role(static_cast<v1::Role>(s.ColumnInt64(1)));
  info.set_created_unix_ms(s.ColumnInt64(2));
  info.set_revoked_unix_ms(s.ColumnInt64(3));
  info.set_created_by(s.ColumnText(4));
  return info;
}

absl::Status CheckRole(v1::Role role) {
  if (auth::RoleName(role) == "unspecified") {
    return absl::InvalidArgumentError("a token needs a role: admin, submit, read, worker or gateway");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckTokenName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 64;
  for (char c : name) {
    ok = ok && (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                c == '.');
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "token name '", name, "': use 1 to 64 letters, digits, '-', '_' or '.'"));
}

absl::Status TokenStore::Insert(const v1::TokenInfo& info, const std::string& hash) {
  PTXB_RETURN_IF_ERROR(CheckTokenName(info.name()));
  PTXB_RETURN_IF_ERROR(CheckRole(info.role()));
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("INSERT INTO tokens(name, role, hash, created_ms, created_by) "
                                    "VALUES(?,?,?,?,?) ON CONFLICT(name) DO NOTHING"));
  s->BindText(1, info.name())
      .BindInt64(2, info.role())
      .BindText(3, hash)
      .BindInt64(4, info.created_unix_ms())
      .BindText(5, info.created_by());
  PTXB_RETURN_IF_ERROR(s->Run());
  if (db_->Changes() == 0) {
    return absl::AlreadyExistsError(absl::StrCat(
        "a token named '", info.name(), "' exists (names are never reused, even revoked)"));
  }
  return absl::OkStatus();
}

absl::Status TokenStore::Replace(const v1::TokenInfo& info, const std::string& hash) {
  PTXB_RETURN_IF_ERROR(CheckTokenName(info.name()));
  PTXB_RETURN_IF_ERROR(CheckRole(info.role()));
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("INSERT INTO tokens(name, role, hash, created_ms, created_by) VALUES(?,?,?,?,?) "
                  "ON CONFLICT(name) DO UPDATE SET role = excluded.role, hash = excluded.hash, "
                  "created_ms = excluded.created_ms, revoked_ms = 0"));
  s->BindText(1, info.name())
      .BindInt64(2, info.role())
      .BindText(3, hash)
      .BindInt64(4, info.created_unix_ms())
      .BindText(5, info.created_by());
  return s->Run();
}

absl::StatusOr<v1::TokenInfo> TokenStore::Revoke(const std::string& name, int64_t now_ms) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * find,
      db_->Cached(absl::StrCat("SELECT ", kColumns, " FROM tokens WHERE name = ?")));
  find->BindText(1, name);
  PTXB_ASSIGN_OR_RETURN(bool row, find->Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no token named '", name, "'"));
  v1::TokenInfo info = ReadInfo(*find);
  find->Reset();
  if (info.revoked_unix_ms() != 0) {
    return absl::FailedPreconditionError(absl::StrCat("token '", name, "' is already revoked"));
  }
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("UPDATE tokens SET revoked_ms = ? WHERE name = ?"));
  s->BindInt64(1, now_ms).BindText(2, name);
  PTXB_RETURN_IF_ERROR(s->Run());
  info.set_revoked_unix_ms(now_ms);
  return info;
}

absl::StatusOr<std::vector<v1::TokenInfo>> TokenStore::List() {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached(absl::StrCat("SELECT ", kColumns, " FROM tokens ORDER BY created_ms, name")));
  std::vector<v1::TokenInfo> out;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out.push_back(ReadInfo(*s));
  }
  return out;
}

absl::Status TokenStore::ForEachValid(
    const std::function<void(const v1::TokenInfo&, const std::string&)>& fn) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached(absl::StrCat("SELECT ", kColumns, ", hash FROM tokens WHERE revoked_ms = 0")));
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    fn(ReadInfo(*s), s->ColumnText(5));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TokenStore::ValidHash(const std::string& name) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT hash FROM tokens WHERE name = ? AND revoked_ms = 0"));
  s->BindText(1, name);
  PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
  std::string hash = row ? s->ColumnText(0) : "";
  s->Reset();
  return hash;
}

absl::StatusOr<std::string> TokenStore::DefaultName(v1::Role role) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("SELECT 1 FROM tokens WHERE name = ?"));
  for (int n = 1;; ++n) {
    std::string name = absl::StrCat(auth::RoleName(role), "-", n);
    s->BindText(1, name);
    PTXB_ASSIGN_OR_RETURN(bool taken, s->Step());
    s->Reset();
    if (!taken) return name;
  }
}

}  // namespace ptxbench::scheduler
