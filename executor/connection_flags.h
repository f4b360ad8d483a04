#ifndef PTXBENCH_EXECUTOR_CONNECTION_FLAGS_H_
#define PTXBENCH_EXECUTOR_CONNECTION_FLAGS_H_

// The flags with which both executor daemons (worker, gateway) reach the
// scheduler securely, defined once here rather than in each main.cc:
//   --token-file FILE   the token (else $PTXBENCH_TOKEN)
//   --tls-ca FILE       the CA of the scheduler's certificate: TLS on
//   --tls-cert FILE --tls-key FILE   a client certificate, if the
//                       scheduler requires one

#include "absl/status/statusor.h"
#include "auth/channel.h"

namespace ptxbench::executor {

// What the flags and the environment name, read. INVALID_ARGUMENT or
// NOT_FOUND naming the flag and file.
absl::StatusOr<auth::ChannelSecurity> ConnectionSecurityFromFlags();

// The same, or on error prints "<program>: <error> (see --help)" and exits
// with kUsageExitCode (command_line.h). Warns when no token was given.
auth::ChannelSecurity ConnectionSecurityOrExit(const char* program);

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_CONNECTION_FLAGS_H_
