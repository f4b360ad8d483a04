// Token commands: token create, token list, token revoke (admin).

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "auth/token.h"
#include "cli/client/client.h"
#include "cli/commands/commands.h"
#include "cli/terminal/format.h"
#include "common/status_macros.h"
#include "common/text_format.h"
#include "nlohmann/json.hpp"

namespace ptxbench::cli {
namespace {

nlohmann::json TokenJson(const v1::TokenInfo& t) {
  return {{"name", t.name()},
          {"role", auth::RoleName(t.role())},
          {"created_unix_ms", t.created_unix_ms()},
          {"revoked_unix_ms", t.revoked_unix_ms()},
          {"created_by", t.created_by()}};
}

absl::Status RunCreate(const Invocation& inv) {
  PTXB_ASSIGN_OR_RETURN(v1::Role role, auth::ParseRole(inv.args.Get("role")));
  v1::CreateTokenRequest request;
  request.set_role(role);
  request.set_name(inv.args.Get("name"));
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::CreateTokenResponse created, client.CreateToken(request));
  if (inv.global.json) {
    nlohmann::json out = TokenJson(created.info());
    out["token"] = created.token();
    inv.out() << out.dump(2) << "\n";
    return absl::OkStatus();
  }
  // The token is the last line, alone, so scripts can take it with tail -1.
  inv.out() << "created token '" << created.info().name() << "' with role "
            << auth::RoleName(created.info().role())
            << ". It is shown this once; the scheduler keeps only its hash. Store it in a "
               "private file (chmod 600) and pass --token-file FILE or PTXBENCH_TOKEN:\n"
            << created.token() << "\n";
  return absl::OkStatus();
}

absl::Status RunList(const Invocation& inv) {
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::ListTokensResponse list, client.ListTokens());
  if (inv.global.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const v1::TokenInfo& t : list.tokens()) out.push_back(TokenJson(t));
    inv.out() << nlohmann::json({{"tokens", out}}).dump(2) << "\n";
    return absl::OkStatus();
  }
  Table table({"NAME", "ROLE", "CREATED", "BY", "STATE"});
  for (const v1::TokenInfo& t : list.tokens()) {
    table.AddRow({t.name(), auth::RoleName(t.role()), FormatUnixMs(t.created_unix_ms()),
                  t.created_by().empty() ? "-" : t.created_by(),
                  t.revoked_unix_ms() == 0
                      ? "valid"
                      : absl::StrCat("revoked ", FormatUnixMs(t.revoked_unix_ms()))});
  }
  inv.out() << table.Render();
  return absl::OkStatus();
}

absl::Status RunRevoke(const Invocation& inv) {
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::RevokeTokenResponse revoked,
                        client.RevokeToken(inv.args.positionals[0]));
  if (inv.global.json) {
    inv.out() << TokenJson(revoked.info()).dump(2) << "\n";
  } else {
    inv.out() << "revoked token '" << revoked.info().name()
              << "': calls with it are refused from now on, and executors registered under "
                 "it can no longer lease or report\n";
  }
  return absl::OkStatus();
}

}  // namespace

void AddTokenCommands(std::vector<Command>* commands) {
  commands->push_back(
      {{"token create",
        "",
        0,
        0,
        {{"role", true, false, "ROLE", "admin, submit, read, worker or gateway (required)"},
         {"name", true, false, "NAME", "a unique name (default ROLE-N)"}},
        "make a token of a role; prints it once, as the last line (admin)",
        "Roles: admin (everything), submit (submit, cancel, retry, extend; and read), read\n"
        "(status, list, show, report, export, the dashboard), worker and gateway (an\n"
        "executor's part of the lease protocol, nothing else). The scheduler stores only a\n"
        "hash of the token: keep it in a private file (chmod 600)."},
       RunCreate});
  commands->push_back({{"token list",
                        "",
                        0,
                        0,
                        {},
                        "every token's name, role, dates and state, never the token (admin)",
                        ""},
                       RunList});
  commands->push_back({{"token revoke",
                        "NAME",
                        1,
                        1,
                        {},
                        "revoke a token: calls with it are refused from now on (admin)",
                        ""},
                       RunRevoke});
}

}  // namespace ptxbench::cli
