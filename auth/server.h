#ifndef PTXBENCH_AUTH_SERVER_H_
#define PTXBENCH_AUTH_SERVER_H_

// The server side of TLS, and where a server may listen without it.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/security/server_credentials.h"

namespace ptxbench::auth {

// As the user named them: --tls-cert, --tls-key, --tls-client-ca.
struct ServerTlsFiles {
  std::string cert;
  std::string key;
  // When set, clients must present a certificate signed by this CA.
  std::string client_ca;

  bool tls() const { return !cert.empty(); }
};

// The PEM texts of a server's TLS files.
struct ServerTls {
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem;
  bool tls() const { return !cert_pem.empty(); }
};
// INVALID_ARGUMENT naming the flag for a key without a certificate (or the
// reverse), --tls-client-ca without them, or a file that is not PEM;
// NOT_FOUND for one that cannot be read.
absl::StatusOr<ServerTls> LoadServerTls(const ServerTlsFiles& files);

// TLS credentials for `tls`, or insecure ones when it holds no certificate.
std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const ServerTls& tls);

// "127.0.0.1:50051", "[::1]:0", "localhost:80", "unix:..." are loopback;
// "0.0.0.0:50051", ":50051", "10.0.0.5:50051" are not.
bool IsLoopbackAddress(absl::string_view address);

// FAILED_PRECONDITION, saying what to do, for a non-loopback `address`
// without TLS unless `insecure`. `what` names the listener in the message.
absl::Status CheckListenAddress(absl::string_view what, absl::string_view address, bool tls,
                                bool insecure);

// A status page's address: "PORT" and ":PORT" bind to 127.0.0.1; anything
// with a host is taken as given (the user asked for it).
std::string LoopbackByDefault(absl::string_view address);

}  // namespace ptxbench::auth

#endif  // PTXBENCH_AUTH_SERVER_H_
