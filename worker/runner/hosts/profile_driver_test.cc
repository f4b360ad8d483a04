#include "worker/runner/hosts/profile_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ptxbench::runner {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A stand-in for ncu (this machine has none): runs the target after "--"
// and writes the report it was told to, or prints the "CSV" of one.
class ProfileDriverTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/profile_driver_" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
    ncu_ = dir_ + "/ncu";
    std::ofstream(ncu_) << "#!/bin/sh\n"
                           "if [ \"$1\" = --import ]; then echo \"csv of $(cat \"$2\")\"; exit 0; fi\n"
                           "echo \"$@\" > " << dir_ << "/argv\n"
                           "while [ \"$1\" != -- ]; do\n"
                           "  if [ \"$1\" = --export ]; then echo report > \"$2.ncu-rep\"; fi\n"
                           "  shift\n"
                           "done\n"
                           "shift\n"
                           "exec \"$@\"\n";
    chmod(ncu_.c_str(), 0755);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ProfileDriverArgs Args(std::vector<std::string> target) {
    ProfileDriverArgs a;
    a.ncu = ncu_;
    a.launches = 5;
    a.metrics = "gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed";
    a.out_prefix = dir_ + "/profile";
    a.target = std::move(target);
    return a;
  }

  std::string dir_, ncu_;
};

TEST_F(ProfileDriverTest, ProfilesTheTargetThenReadsTheReportBack) {
  EXPECT_EQ(RunProfileDriver(Args({"/bin/sh", "-c", "exit 3"})), 3);  // the target's own code
  EXPECT_EQ(Read(dir_ + "/profile.ncu-rep"), "report\n");
  EXPECT_EQ(Read(dir_ + "/profile.csv"), "csv of report\n");
  EXPECT_EQ(Read(dir_ + "/argv"),
            "--clock-control none --launch-skip 1 --launch-count 5 --metrics "
            "gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed --export " +
                dir_ + "/profile --force-overwrite -- /bin/sh -c exit 3\n");
}

TEST_F(ProfileDriverTest, AProfilerThatCannotStartIs127AndAKillIs128PlusTheSignal) {
  ProfileDriverArgs a = Args({"/bin/true"});
  a.ncu = dir_ + "/no-such-ncu";
  EXPECT_EQ(RunProfileDriver(a), 127);
  EXPECT_EQ(RunProfileDriver(Args({"/bin/sh", "-c", "kill -9 $$"})), 128 + 9);
}

TEST(ProfileDriverArgvTest, TheImportPrintsTheRawPageInBaseUnits) {
  ProfileDriverArgs a;
  a.ncu = "/opt/nvidia/nsight-compute/2025.3.1/ncu";
  a.out_prefix = "/ptxbench/work/profile";
  EXPECT_THAT(NcuImportArgv(a),
              testing::ElementsAre(a.ncu, "--import", "/ptxbench/work/profile.ncu-rep", "--csv",
                                   "--page", "raw", "--print-units", "base"));
}

}  // namespace
}  // namespace ptxbench::runner
