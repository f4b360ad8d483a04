#include "worker/runner/hosts/jit_images.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/hash.h"

namespace ptxbench::runner {
namespace {

// Triton's cache: <dir>/<key>/<name>.cubin.
constexpr int kMaxDepth = 3;
// Images a description names; the rest are counted.
constexpr int kJitImagesNamed = 8;

// The whole of regular file `name` under directory `dir_fd`; else why not.
std::string ReadImage(int dir_fd, const char* name, std::string* out) {
  const int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return absl::StrCat("open: ", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      st.st_size > kMaxJitImageBytes) {
    close(fd);
    return "not a regular file of 1 byte to 64 MiB";
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  bool ok = true;
  while (ok && got < out->size()) {
    const ssize_t n = read(fd, out->data() + got, out->size() - got);
    ok = n > 0;
    if (ok) got += static_cast<size_t>(n);
  }
  close(fd);
  return ok ? "" : "a short read";
}

void Walk(int dir_fd, int depth, JitCache* cache, int* seen) {
  DIR* dir = fdopendir(dir_fd);
  if (dir == nullptr) {
    close(dir_fd);
    return;
  }
  ++cache->directories;
  while (const dirent* e = readdir(dir)) {
    if (*seen >= kMaxJitImages) break;
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (e->d_type == DT_DIR && depth < kMaxDepth) {
      const int sub = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) Walk(sub, depth + 1, cache, seen);
      continue;
    }
    ++cache->files;
    if (!absl::EndsWith(name, ".cubin")) continue;
    ++*seen;
    std::string image;
    const std::string why =
        e->d_type == DT_REG ? ReadImage(dirfd(dir), e->d_name, &image) : "not a regular file";
    if (why.empty()) {
      cache->tags.insert(Sha256Hex(image).substr(0, 16));
    } else if (cache->unread++ == 0) {
      cache->first_unread = absl::StrCat(name, ": ", why);
    }
  }
  closedir(dir);
}

}  // namespace

JitCache ScanJitCache(int parent_fd, const std::string& name) {
  JitCache cache;
  const int fd = openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    cache.missing = absl::StrCat("no cache: ", name, ": ", strerror(errno));
    return cache;
  }
  int seen = 0;
  Walk(fd, 1, &cache, &seen);
  return cache;
}

std::string DescribeJitCache(const JitCache& cache) {
  if (!cache.missing.empty()) return absl::StrCat("0 images (", cache.missing, ")");
  // The census names each kernel's image by the same 16 digits.
  std::string out = absl::StrCat(cache.tags.size(), " images");
  int named = 0;
  for (const std::string& tag : cache.tags) {
    if (named++ == kJitImagesNamed) {
      absl::StrAppend(&out, ", ...");
      break;
    }
    absl::StrAppend(&out, named == 1 ? " " : ", ", tag);
  }
  absl::StrAppend(&out, " (cache: ", cache.files, " files in ", cache.directories, " directories");
  if (cache.unread > 0) {
    absl::StrAppend(&out, "; ", cache.unread, " .cubin not read, the first ", cache.first_unread);
  }
  return out + ")";
}

}  // namespace ptxbench::runner
