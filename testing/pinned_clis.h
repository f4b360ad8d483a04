#ifndef PTXBENCH_TESTING_PINNED_CLIS_H_
#define PTXBENCH_TESTING_PINNED_CLIS_H_

// The tests that run each pinned agent CLI (agents/clis.h) take its name as
// their parameter; this makes a test name of it ("claude-code" ->
// "claudecode": gtest names allow no dash).

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace ptxbench::testing {

inline std::string CliTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
  return name;
}

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_PINNED_CLIS_H_
