#include "testing/tls_certs.h"

#include <unistd.h>

#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "process/run.h"

namespace ptxbench::testing {
namespace {

constexpr char kOpenssl[] = "/usr/bin/openssl";

absl::Status Openssl(std::vector<std::string> args) {
  process::RunOptions run;
  run.argv = {kOpenssl};
  run.argv.insert(run.argv.end(), args.begin(), args.end());
  run.deadline = absl::Seconds(30);
  absl::StatusOr<process::RunResult> result = process::Run(run);
  if (!result.ok()) return result.status();
  if (!result->ok()) {
    return absl::InternalError(
        absl::StrCat("openssl ", args[0], " ", result->Describe(), ": ", result->output));
  }
  return absl::OkStatus();
}

// P-256 keys: quick to make, and every TLS stack takes them.
std::vector<std::string> NewKey(const std::string& key) {
  return {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key};
}

}  // namespace

absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir) {
  if (access(kOpenssl, X_OK) != 0) {
    return absl::FailedPreconditionError("no openssl command at /usr/bin/openssl");
  }
  TestCertificates out{dir + "/ca.pem", dir + "/server.pem", dir + "/server.key"};
  const std::string ca_key = dir + "/ca.key", csr = dir + "/server.csr";
  const std::string extensions = dir + "/server.ext";
  std::vector<std::string> ca = {"req", "-x509", "-days", "2", "-subj", "/CN=ptxbench test CA",
                                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                                 "keyUsage=critical,keyCertSign,cRLSign", "-out", out.ca_cert};
  std::vector<std::string> key = NewKey(ca_key);
  ca.insert(ca.end(), key.begin(), key.end());
  if (absl::Status s = Openssl(ca); !s.ok()) return s;

  std::vector<std::string> request = {"req", "-subj", "/CN=127.0.0.1", "-out", csr};
  key = NewKey(out.server_key);
  request.insert(request.end(), key.begin(), key.end());
  if (absl::Status s = Openssl(request); !s.ok()) return s;

  std::ofstream(extensions) << "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n"
                               "basicConstraints=CA:FALSE\n"
                               "keyUsage=critical,digitalSignature\n"
                               "extendedKeyUsage=serverAuth\n";
  if (absl::Status s = Openssl({"x509", "-req", "-in", csr, "-CA", out.ca_cert, "-CAkey", ca_key,
                                "-CAcreateserial", "-days", "2", "-extfile", extensions, "-out",
                                out.server_cert});
      !s.ok()) {
    return s;
  }
  return out;
}

}  // namespace ptxbench::testing
