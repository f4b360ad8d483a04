#ifndef PTXBENCH_COMMON_FILE_H_
#define PTXBENCH_COMMON_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench {

// The whole file, byte for byte. kNotFound naming the path when it cannot
// be read.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Replaces the file's content with `content` (creating it). kInternal
// naming the path when it cannot be written (for a /proc or cgroup file:
// the kernel refused the value).
absl::Status WriteFile(const std::string& path, absl::string_view content);

// Writes `content` beside `path` and renames it into place: a reader (or a
// crash) never sees half a file. kInternal naming the path on failure, with
// nothing left behind.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view content);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_FILE_H_
