#ifndef PTXBENCH_COMMON_FILE_H_
#define PTXBENCH_COMMON_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace ptxbench {

// The whole file, byte for byte. kNotFound naming the path when it cannot
// be read.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_FILE_H_
