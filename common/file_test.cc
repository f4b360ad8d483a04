#include "common/file.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace ptxbench {
namespace {
namespace fs = std::filesystem;

class ReadUntrustedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "file_test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ / "kernel.cu") << "__global__ void k() {}\n";
    std::ofstream(dir_ / "secret.txt") << "SECRET\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(ReadUntrustedFileTest, ReadsARegularFile) {
  absl::StatusOr<std::string> text = ReadUntrustedFile(Path("kernel.cu"), 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "__global__ void k() {}\n");
}

TEST_F(ReadUntrustedFileTest, RefusesWhatIsNotARegularFileOfItsOwn) {
  fs::create_symlink(dir_ / "secret.txt", dir_ / "link.cu");
  fs::create_symlink("/dev/zero", dir_ / "zero.cu");
  ASSERT_EQ(mkfifo(Path("fifo.cu").c_str(), 0600), 0);
  for (const char* name : {"link.cu", "zero.cu"}) {
    absl::StatusOr<std::string> text = ReadUntrustedFile(Path(name), 1 << 20);
    EXPECT_EQ(text.status().code(), absl::StatusCode::kFailedPrecondition) << name;
    EXPECT_NE(text.status().message().find("symbolic link"), std::string::npos) << name;
  }
  // A FIFO with no writer: refused at once, not waited on.
  EXPECT_EQ(ReadUntrustedFile(Path("fifo.cu"), 1 << 20).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadUntrustedFile("/dev/zero", 1 << 20).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadUntrustedFile(dir_.string(), 1 << 20).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(ReadUntrustedFileTest, SaysWhenItIsMissingOrTooLarge) {
  EXPECT_EQ(ReadUntrustedFile(Path("none.cu"), 1 << 20).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadUntrustedFile(Path("kernel.cu"), 10).status().code(),
            absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace ptxbench
