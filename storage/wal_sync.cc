#include "storage/wal_sync.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ptxbench::storage {
namespace {

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Syncs the directory holding `path`, so an entry created in it is durable.
absl::Status SyncDirectory(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open directory", dir);
  const int rc = fsync(fd);
  const int saved = errno;
  close(fd);
  errno = saved;
  return rc == 0 ? absl::OkStatus() : Errno("cannot sync directory", dir);
}

}  // namespace

WalSync::WalSync(std::string database_path) : wal_path_(std::move(database_path) + "-wal") {}

WalSync::~WalSync() {
  if (fd_ >= 0) close(fd_);
}

absl::Status WalSync::Open() {
  if (fd_ >= 0) close(fd_);
  fd_ = open(wal_path_.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat held {};
  if (fd_ < 0 || fstat(fd_, &held) != 0) return Errno("cannot open the WAL", wal_path_);
  dev_ = held.st_dev;
  ino_ = held.st_ino;
  return SyncDirectory(wal_path_);
}

absl::Status WalSync::Sync() {
  struct stat named {};
  if (stat(wal_path_.c_str(), &named) != 0) return Errno("cannot stat the WAL", wal_path_);
  if (fd_ < 0 || named.st_ino != ino_ || named.st_dev != dev_) {
    if (absl::Status opened = Open(); !opened.ok()) return opened;
  }
  if (fdatasync(fd_) != 0) return Errno("cannot sync the WAL", wal_path_);
  return absl::OkStatus();
}

}  // namespace ptxbench::storage
