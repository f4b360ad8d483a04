// A profile or sanitize run's files (harness_internal.h): opened beside the
// results while the harness is privileged, copied from the candidate's disk
// at the end.

#include "worker/runner/harness/harness_internal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ptxbench::runner::harness_internal {

std::vector<const char*> Harness::ToolFiles() const {
  if (sanitizing()) return {kSanitizerLog};
  return {kProfileReport, kProfileCsv};
}

bool Harness::OpenProfileFiles() {
  for (const char* name : ToolFiles()) {
    const int fd = open(absl::StrCat(dir_, "/", name).c_str(),
                        O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return false;
    profile_fds_.push_back(fd);
  }
  return true;
}

void Harness::CopyProfileFiles() {
  const std::vector<const char*> names = ToolFiles();
  const int64_t limit = sanitizing() ? kMaxSanitizerLogBytes : kMaxProfileFileBytes;
  for (size_t i = 0; i < profile_fds_.size(); ++i) {
    const int in = isolation_->OpenProfileFile(names[i]);
    struct stat st;
    if (in >= 0 && fstat(in, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= limit) {
      char buffer[1 << 16];
      int64_t total = 0;
      ssize_t n;
      while ((n = read(in, buffer, sizeof buffer)) > 0 && total + n <= limit) {
        total += n;
        if (write(profile_fds_[i], buffer, static_cast<size_t>(n)) != n) break;
      }
    }
    if (in >= 0) close(in);
    close(profile_fds_[i]);
  }
  profile_fds_.clear();
}

}  // namespace ptxbench::runner::harness_internal
