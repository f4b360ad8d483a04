#ifndef PTXBENCH_TESTS_TESTING_TEST_BINARY_H_
#define PTXBENCH_TESTS_TESTING_TEST_BINARY_H_

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ptxbench::testing {

// The binary built at `built`, or the one of that name in
// $PTXBENCH_TEST_BIN_DIR (a build copied to another machine, e.g. a GPU
// host, where the build tree's paths do not exist).
inline std::string TestBinary(const char* built) {
  const char* dir = std::getenv("PTXBENCH_TEST_BIN_DIR");
  if (dir == nullptr || *dir == '\0') return built;
  return std::string(dir) + "/" + std::filesystem::path(built).filename().string();
}

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTS_TESTING_TEST_BINARY_H_
