#ifndef PTXBENCH_COMMON_FILE_H_
#define PTXBENCH_COMMON_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench {

// The whole file, byte for byte. kNotFound naming the path when it cannot
// be read.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// A file that an untrusted process could have replaced (an agent's
// workspace, seen from outside its sandbox): read only when the path is
// itself a regular file of at most `max` bytes, never through a symbolic
// link (which would name a file of this machine), nor from a FIFO or a
// device (which could block or never end). kNotFound when there is none,
// kFailedPrecondition naming what it is instead, kOutOfRange when larger.
absl::StatusOr<std::string> ReadUntrustedFile(const std::string& path, size_t max);

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
