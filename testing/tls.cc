#include "testing/tls.h"

#include "absl/strings/str_cat.h"
#include "common/data_dir.h"
#include "testing/child_process.h"

namespace ptxbench::testing {

absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir) {
  CommandResult made =
      RunCommand({DataDir() + "/scripts/make_certs.sh", dir}, /*merge_stderr=*/true);
  if (made.exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("scripts/make_certs.sh ", dir, " exited ", made.exit_code, ": ", made.out));
  }
  return TestCertificates{dir + "/ca.pem",     dir + "/server.pem", dir + "/server.key",
                          dir + "/client.pem", dir + "/client.key"};
}

}  // namespace ptxbench::testing
