#ifndef PTXBENCH_AUTH_PEM_H_
#define PTXBENCH_AUTH_PEM_H_

// Internal to auth/: reading the PEM files that TLS flags name.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::auth {

// The text of `path` ("" when `path` is empty: the flag was not given).
// NOT_FOUND or INVALID_ARGUMENT (not PEM), naming `--flag` and the path.
absl::StatusOr<std::string> ReadPemFile(absl::string_view flag, const std::string& path);

}  // namespace ptxbench::auth

#endif  // PTXBENCH_AUTH_PEM_H_
