#include "common/cache_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace ptxbench {
namespace {

bool OwnedAndClosed(const struct stat& st) {
  return st.st_uid == geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

}  // namespace

std::string UserCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/ptxbench";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/ptxbench";
  return "/tmp/ptxbench-" + std::to_string(geteuid());
}

bool PrivateFile(const std::string& path) {
  struct stat file, dir;
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return lstat(path.c_str(), &file) == 0 && S_ISREG(file.st_mode) && OwnedAndClosed(file) &&
         lstat(parent.empty() ? "." : parent.c_str(), &dir) == 0 && S_ISDIR(dir.st_mode) &&
         OwnedAndClosed(dir);
}

}  // namespace ptxbench
