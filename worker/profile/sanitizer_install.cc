#include "worker/profile/sanitizer_install.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "worker/profile/ncu_install.h"

namespace ptxbench::worker {

namespace fs = std::filesystem;

std::string SanitizerInstall::Describe(const std::string& configured) const {
  return absl::StrCat("compute-sanitizer ", version, " at ", configured);
}

absl::StatusOr<SanitizerInstall> FindSanitizer(const std::string& configured) {
  std::error_code ec;
  fs::path file = fs::canonical(configured, ec);
  if (ec || !fs::is_regular_file(file)) {
    return absl::NotFoundError(absl::StrCat("no compute-sanitizer at ", configured));
  }
  if (!IsElf(file.string())) {
    const fs::path program =
        fs::canonical(file.parent_path().parent_path() / "compute-sanitizer" / "compute-sanitizer", ec);
    if (ec || !IsElf(program.string())) {
      return absl::NotFoundError(absl::StrCat(
          configured, " is a script and its installation's program "
                      "(../compute-sanitizer/compute-sanitizer) is not there"));
    }
    file = program;
  }
  if (access(file.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(file.string(), " is not executable"));
  }
  SanitizerInstall install{file.string(), file.parent_path().string(), ""};
  absl::StatusOr<std::string> version = ToolVersion(install.executable);
  if (!version.ok()) return version.status();
  install.version = *version;
  return install;
}

}  // namespace ptxbench::worker
