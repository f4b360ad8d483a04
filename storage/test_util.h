#ifndef PTXBENCH_STORAGE_TEST_UTIL_H_
#define PTXBENCH_STORAGE_TEST_UTIL_H_

// Test-only helpers for ptxbench::storage tests.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"

namespace ptxbench::storage::testing {

// A fresh path in the test temp dir, unique per test and process; removes the
// file and its -wal/-shm companions when destroyed.
class TempDbPath {
 public:
  TempDbPath() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::string(::testing::TempDir()) + "ptxb_" + info->test_suite_name() + "_" +
            info->name() + "_" + std::to_string(::getpid()) + ".db";
    Remove();
  }
  ~TempDbPath() { Remove(); }
  const std::string& path() const { return path_; }

 private:
  void Remove() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      std::filesystem::remove(path_ + suffix, ec);
    }
  }
  std::string path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

}  // namespace ptxbench::storage::testing

#endif  // PTXBENCH_STORAGE_TEST_UTIL_H_
