#include "executor/connection_flags.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"
#include "auth/token.h"
#include "auth/token.h"
#include "common/log.h"
#include "executor/command_line.h"

ABSL_FLAG(std::string, token_file, "",
          "file holding this executor's token (role worker or gateway); else $PTXBENCH_TOKEN");
ABSL_FLAG(std::string, tls_ca, "", "CA certificate (PEM) of the scheduler's TLS: turns TLS on");
ABSL_FLAG(std::string, tls_cert, "", "client certificate (PEM), for a scheduler that asks one");
ABSL_FLAG(std::string, tls_key, "", "private key (PEM) of --tls-cert");

namespace ptxbench::executor {

absl::StatusOr<auth::ChannelSecurity> ConnectionSecurityFromFlags() {
  const char* env = std::getenv(auth::kTokenEnvironment);
  return auth::LoadChannelSecurity({absl::GetFlag(FLAGS_token_file), env != nullptr ? env : "",
                                    /*fallback_token_file=*/"", absl::GetFlag(FLAGS_tls_ca),
                                    absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key)});
}

auth::ChannelSecurity ConnectionSecurityOrExit(const char* program) {
  absl::StatusOr<auth::ChannelSecurity> security = ConnectionSecurityFromFlags();
  if (!security.ok()) {
    std::fprintf(stderr, "%s: %s (see --help)\n", program,
                 std::string(security.status().message()).c_str());
    std::exit(kUsageExitCode);
  }
  if (security->token.empty()) {
    LogWarning("no token: pass --token-file FILE or set PTXBENCH_TOKEN; the scheduler refuses "
               "executors without one");
  }
  return *std::move(security);
}

}  // namespace ptxbench::executor
