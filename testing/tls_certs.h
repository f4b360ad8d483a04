#ifndef PTXBENCH_TESTING_TLS_CERTS_H_
#define PTXBENCH_TESTING_TLS_CERTS_H_

// Throwaway TLS material for tests of the TLS listeners: a certificate
// authority of its own and a server certificate it signed for 127.0.0.1,
// ::1 and localhost, made by the `openssl` command (scripts/setup.sh
// installs it). Test-only: the keys are unencrypted files.

#include <string>

#include "absl/status/statusor.h"

namespace ptxbench::testing {

struct TestCertificates {
  std::string ca_cert;      // PEM: what a client trusts
  std::string server_cert;  // PEM, signed by the CA
  std::string server_key;   // PEM, unencrypted
};

// Writes the files into `dir` (which must exist). kFailedPrecondition when
// there is no openssl command; kInternal, with its output, when it fails.
absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir);

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_TLS_CERTS_H_
