#ifndef PTXBENCH_TESTING_TLS_H_
#define PTXBENCH_TESTING_TLS_H_

// A private CA with a server and a client certificate (scripts/make_certs.sh)
// for the tests and benchmarks of TLS.

#include <string>

#include "absl/status/statusor.h"

namespace ptxbench::testing {

struct TestCertificates {
  std::string ca;  // ca.pem: --tls-ca, --tls-client-ca
  std::string server_cert, server_key;
  std::string client_cert, client_key;
};

// Makes them in `dir` (created). kInternal with the script's output on failure.
absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir);

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_TLS_H_
