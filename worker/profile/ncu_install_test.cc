#include "worker/profile/ncu_install.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ptxbench::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Installations laid out as Nsight Compute's (this machine has none): the
// program is a copy of /bin/sh run with a script that answers --version.
class NcuInstallTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/ncu_install_" + std::to_string(getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // <root>/target/linux-x64/ncu: the stand-in program (testing/fake_ncu.cc).
  std::string Install(const std::string& root) {
    fs::create_directories(root + "/target/linux-x64");
    const std::string program = root + "/target/linux-x64/ncu";
    fs::copy_file(PTXB_FAKE_NCU, program, fs::copy_options::overwrite_existing);
    return fs::canonical(program).string();
  }
  void Script(const std::string& path) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << "#!/bin/sh\nexec \"$(dirname \"$0\")/target/linux-x64/ncu\" \"$@\"\n";
    chmod(path.c_str(), 0755);
  }
  std::string dir_;
};

TEST_F(NcuInstallTest, AScriptIsReplacedByItsInstallationsProgram) {
  // The toolkit's bin/ncu in front of an installation under /opt.
  Install(dir_ + "/opt/2024.1.0");
  const std::string newest = Install(dir_ + "/opt/2025.3.1");
  Script(dir_ + "/cuda/bin/ncu");
  absl::StatusOr<NcuInstall> found = FindNcu(dir_ + "/cuda/bin/ncu", dir_ + "/opt");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->executable, newest);
  EXPECT_EQ(found->root, fs::canonical(dir_ + "/opt/2025.3.1").string());
  EXPECT_EQ(found->version, "2025.3.1.0");
  // An installation's own script: its directory is the root.
  Script(dir_ + "/own/ncu");
  const std::string own = Install(dir_ + "/own");
  found = FindNcu(dir_ + "/own/ncu", dir_ + "/opt");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->executable, own);
  EXPECT_EQ(found->root, fs::canonical(dir_ + "/own").string());
}

TEST_F(NcuInstallTest, TheProgramItselfNamesItsInstallation) {
  const std::string program = Install(dir_ + "/nc");
  absl::StatusOr<NcuInstall> found = FindNcu(program, dir_ + "/opt");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->executable, program);
  EXPECT_EQ(found->root, fs::canonical(dir_ + "/nc").string());
  // A program that does not answer like ncu is refused.
  fs::copy_file("/bin/true", dir_ + "/nc/target/linux-x64/ncu", fs::copy_options::overwrite_existing);
  EXPECT_THAT(FindNcu(program, dir_ + "/opt").status().message(),
              HasSubstr(" --version names no version"));
}

TEST_F(NcuInstallTest, NothingThereOrNoProgramIsSaidPlainly) {
  EXPECT_EQ(FindNcu(dir_ + "/none").status().message(), "no ncu at " + dir_ + "/none");
  Script(dir_ + "/cuda/bin/ncu");
  EXPECT_THAT(FindNcu(dir_ + "/cuda/bin/ncu", dir_ + "/opt").status().message(),
              HasSubstr("is a script and no Nsight Compute installation with its program"));
}

TEST(NcuInstallDescribeTest, NamesTheVersionAndThePathGiven) {
  NcuInstall i{"/opt/nvidia/nsight-compute/2025.3.1/target/linux-desktop-glibc_2_11_3-x64/ncu",
               "/opt/nvidia/nsight-compute/2025.3.1", "2025.3.1.0"};
  EXPECT_EQ(i.Describe("/usr/local/cuda/bin/ncu"),
            "Nsight Compute 2025.3.1.0 at /usr/local/cuda/bin/ncu");
}

}  // namespace
}  // namespace ptxbench::worker
