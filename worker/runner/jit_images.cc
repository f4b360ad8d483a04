#include "worker/runner/jit_images.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/hash.h"

namespace ptxbench::runner {
namespace {

// Triton's cache: <dir>/<key>/<name>.cubin.
constexpr int kMaxDepth = 3;

// The whole of regular file `name` under directory `dir_fd`, or nothing.
bool ReadImage(int dir_fd, const char* name, std::string* out) {
  const int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
            st.st_size <= kMaxJitImageBytes;
  if (ok) {
    out->resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (ok && got < out->size()) {
      const ssize_t n = read(fd, out->data() + got, out->size() - got);
      ok = n > 0;
      if (ok) got += static_cast<size_t>(n);
    }
  }
  close(fd);
  return ok;
}

void Walk(int dir_fd, int depth, std::set<std::string>* tags, int* seen) {
  DIR* dir = fdopendir(dir_fd);
  if (dir == nullptr) {
    close(dir_fd);
    return;
  }
  while (const dirent* e = readdir(dir)) {
    if (*seen >= kMaxJitImages) break;
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (e->d_type == DT_DIR && depth < kMaxDepth) {
      const int sub = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) Walk(sub, depth + 1, tags, seen);
    } else if (e->d_type == DT_REG && absl::EndsWith(name, ".cubin")) {
      ++*seen;
      std::string image;
      if (ReadImage(dirfd(dir), e->d_name, &image)) tags->insert(Sha256Hex(image).substr(0, 16));
    }
  }
  closedir(dir);
}

}  // namespace

std::set<std::string> JitImageTags(const std::string& cache_dir) {
  std::set<std::string> tags;
  const int fd = open(cache_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return tags;
  int seen = 0;
  Walk(fd, 1, &tags, &seen);
  return tags;
}

}  // namespace ptxbench::runner
