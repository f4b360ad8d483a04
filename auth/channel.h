#ifndef PTXBENCH_AUTH_CHANNEL_H_
#define PTXBENCH_AUTH_CHANNEL_H_

// The client side of a connection to the scheduler, shared by the CLI, the
// workers, the gateways and the dashboard: which token every call carries
// and whether the channel is TLS, and the channel built from them.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/channel_arguments.h"

namespace ptxbench::auth {

struct ChannelSecurity {
  // Sent as "authorization: Bearer <token>" on every call; empty: none.
  std::string token;
  // PEM of the CA that signed the scheduler's certificate. Empty: plaintext.
  std::string ca_pem;
  // A client certificate and its key (PEM), for a scheduler that requires
  // one (--tls-client-ca); both or neither.
  std::string cert_pem;
  std::string key_pem;

  bool tls() const { return !ca_pem.empty(); }
};

// Where the security of a channel comes from, as the user named it.
struct ChannelSecuritySources {
  std::string token_file;  // --token-file
  std::string token_env;   // the value of $PTXBENCH_TOKEN ("" when unset)
  // Read when neither of the above is given and the file exists: the CLI's
  // fallback to the admin token of its data directory.
  std::string fallback_token_file;
  std::string ca_file;    // --tls-ca
  std::string cert_file;  // --tls-cert (client certificate)
  std::string key_file;   // --tls-key
};

// Reads what `sources` name. The token comes from the file, else the
// environment, else the fallback; none is not an error here (the scheduler
// answers UNAUTHENTICATED, saying how to pass one). INVALID_ARGUMENT or
// NOT_FOUND naming the flag and file for anything unreadable or malformed.
absl::StatusOr<ChannelSecurity> LoadChannelSecurity(const ChannelSecuritySources& sources);

// A channel to `address` with `security`: TLS when security.tls(), and the
// token added to every call by an interceptor.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address,
                                          const ChannelSecurity& security,
                                          grpc::ChannelArguments args = {});

}  // namespace ptxbench::auth

#endif  // PTXBENCH_AUTH_CHANNEL_H_
