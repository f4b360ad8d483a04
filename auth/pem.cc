#include "auth/pem.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file.h"

namespace ptxbench::auth {

absl::StatusOr<std::string> ReadPemFile(absl::string_view flag, const std::string& path) {
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("--", flag, ": cannot read ", path));
  if (!absl::StrContains(*text, "-----BEGIN ")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": ", path, " is not a PEM file (no -----BEGIN line)"));
  }
  return *std::move(text);
}

}  // namespace ptxbench::auth
