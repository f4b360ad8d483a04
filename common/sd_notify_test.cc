#include "common/sd_notify.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "testing/notify_socket.h"

namespace ptxbench {
namespace {

TEST(SdNotifyTest, WithoutASocketItDoesNothing) {
  unsetenv("NOTIFY_SOCKET");
  EXPECT_TRUE(SdNotify("READY=1").ok());
}

TEST(SdNotifyTest, SendsOneDatagramToTheSocket) {
  const std::string path = ::testing::TempDir() + "/notify_" + std::to_string(getpid());
  const int fd = testing::BindNotifySocket(path, 5);
  ASSERT_GE(fd, 0);
  setenv("NOTIFY_SOCKET", path.c_str(), 1);
  ASSERT_TRUE(SdNotify("READY=1\nSTATUS=serving").ok());
  char buffer[256];
  const ssize_t n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
  EXPECT_EQ(std::string(buffer, n > 0 ? n : 0), "READY=1\nSTATUS=serving");
  setenv("NOTIFY_SOCKET", (path + ".missing").c_str(), 1);
  EXPECT_EQ(SdNotify("READY=1").code(), absl::StatusCode::kUnavailable);
  unsetenv("NOTIFY_SOCKET");
  close(fd);
  unlink(path.c_str());
}

}  // namespace
}  // namespace ptxbench
