#ifndef PTXBENCH_COMMON_HASH_H_
#define PTXBENCH_COMMON_HASH_H_

// Content hashes: blob keys, kernel hashes and deterministic ids all use
// SHA-256, so one function serves them all.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace ptxbench {

// Lower-case hex SHA-256 of `data` (64 characters).
std::string Sha256Hex(absl::string_view data);

// A stable 64-bit value derived from SHA-256 of `data`, for seeding.
uint64_t StableHash64(absl::string_view data);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_HASH_H_
