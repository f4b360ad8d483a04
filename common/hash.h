#ifndef PTXBENCH_COMMON_HASH_H_
#define PTXBENCH_COMMON_HASH_H_

// Content hashes: blob keys, kernel hashes and deterministic ids all use
// SHA-256, so one function serves them all.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench {

// Lower-case hex SHA-256 of `data` (64 characters).
std::string Sha256Hex(absl::string_view data);

// Lower-case hex SHA-256 of the file at `path`, read in 1 MiB pieces (an
// agent CLI's executable is hundreds of MB). NOT_FOUND or INTERNAL naming the
// path when it cannot be read.
absl::StatusOr<std::string> Sha256FileHex(const std::string& path);

// A stable 64-bit value derived from SHA-256 of `data`, for seeding.
uint64_t StableHash64(absl::string_view data);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_HASH_H_
