#include "cli/terminal/progress.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

namespace ptxbench::cli {
namespace {

TEST(ElapsedProgress, RedrawsOnATerminalAndClearsTheLine) {
  std::ostringstream err;
  bool ran = false;
  WithElapsedProgress(err, /*live=*/true, "evaluating",
                      [&] {
                        std::this_thread::sleep_for(std::chrono::milliseconds(120));
                        ran = true;
                      },
                      absl::Milliseconds(20));
  EXPECT_TRUE(ran);
  const std::string s = err.str();
  EXPECT_NE(s.find("\revaluating 0 s"), std::string::npos) << s;
  EXPECT_GE(std::count(s.begin(), s.end(), '\r'), 3) << "redrawn while waiting";
  EXPECT_EQ(s.back(), '\r') << "the line is cleared at the end";
}

TEST(ElapsedProgress, OneLineWithoutATerminal) {
  std::ostringstream err;
  bool ran = false;
  WithElapsedProgress(err, /*live=*/false, "evaluating", [&] { ran = true; });
  EXPECT_TRUE(ran);
  EXPECT_EQ(err.str(), "evaluating\n");
}

}  // namespace
}  // namespace ptxbench::cli
