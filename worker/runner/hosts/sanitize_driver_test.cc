#include "worker/runner/hosts/sanitize_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ptxbench::runner {
namespace {

using testing::ElementsAre;

TEST(SanitizeDriver, RunsMemcheckIntoItsOwnLogWithTheHostAsItsTarget) {
  const SanitizeDriverArgs args{"/cs", 100, "/ptxbench/profile/memcheck.log",
                                {"/ptxbench/bin/ptxbench-candidate-host", "--channel", "3"}};
  EXPECT_THAT(SanitizerArgv(args),
              ElementsAre("/cs", "--tool", "memcheck", "--log-file",
                          "/ptxbench/profile/memcheck.log", "--print-limit", "100",
                          "--show-backtrace", "device", "--nvtx", "yes", "--leak-check", "no",
                          "--", "/ptxbench/bin/ptxbench-candidate-host", "--channel", "3"));
}

TEST(SanitizeDriver, ReturnsTheSanitizersExitCodeAndRunsTheTarget) {
  // A stand-in for compute-sanitizer (this machine has none): writes a log
  // where --log-file says, then runs the target after "--".
  const std::string dir = testing::TempDir() + "/sanitize_driver_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string cs = dir + "/compute-sanitizer";
  std::ofstream(cs) << "#!/bin/sh\n"
                       "while [ \"$1\" != -- ]; do\n"
                       "  if [ \"$1\" = --log-file ]; then log=\"$2\"; fi\n"
                       "  shift\n"
                       "done\n"
                       "shift\n"
                       "echo '========= COMPUTE-SANITIZER' > \"$log\"\n"
                       "\"$@\"\n"
                       "code=$?\n"
                       "echo '========= ERROR SUMMARY: 0 errors' >> \"$log\"\n"
                       "exit $code\n";
  chmod(cs.c_str(), 0755);
  const SanitizeDriverArgs args{cs, 1, dir + "/memcheck.log", {"/bin/sh", "-c", "exit 5"}};
  EXPECT_EQ(RunSanitizeDriver(args), 5);
  std::ifstream in(dir + "/memcheck.log");
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_EQ(log.str(), "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n");
  EXPECT_EQ(RunSanitizeDriver({dir + "/absent", 1, dir + "/x.log", {"/bin/true"}}), 127);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench::runner
