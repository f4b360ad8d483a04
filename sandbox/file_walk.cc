#include "sandbox/file_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "sandbox/vendor_library.h"

namespace ptxbench::sandbox {
namespace {

// Which mount the entry `name` of `dir_fd` is on: the kernel's mount id where
// it has one (Linux 5.8), else its device (a btrfs subvolume then reads as
// another mount, and is not walked).
bool MountOf(int dir_fd, const char* name, uint64_t* mount) {
  struct statx st;
  if (statx(dir_fd, name, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &st) != 0) return false;
  *mount = (st.stx_mask & STATX_MNT_ID) != 0
               ? st.stx_mnt_id
               : (uint64_t{st.stx_dev_major} << 32 | st.stx_dev_minor);
  return true;
}

bool KernelFilesystem(const std::string& dir) {
  struct statfs fs;
  return statfs(dir.c_str(), &fs) == 0 &&
         (fs.f_type == SYSFS_MAGIC || fs.f_type == PROC_SUPER_MAGIC);
}

// The process's walks, per directory.
struct WalkCache {
  absl::Mutex mu;
  std::map<std::string, std::vector<std::string>> found ABSL_GUARDED_BY(mu);
};

WalkCache& Cache() {
  static auto* cache = new WalkCache;
  return *cache;
}

}  // namespace

std::vector<std::string> FindFiles(const std::string& dir, const FileMatch& match,
                                   const WalkBounds& bounds) {
  std::vector<std::string> found;
  // Below the root no link is followed; the root itself may be one.
  char real[PATH_MAX];
  if (realpath(dir.c_str(), real) == nullptr) return found;
  const std::string root = real;
  uint64_t root_mount = 0;
  if (KernelFilesystem(root) || !MountOf(AT_FDCWD, root.c_str(), &root_mount)) return found;
  struct Pending {
    std::string relative;  // "" for the root
    int depth;
  };
  std::vector<Pending> pending = {{"", 0}};
  int entries = 0;
  while (!pending.empty() && entries < bounds.max_entries) {
    const Pending here = std::move(pending.back());
    pending.pop_back();
    const std::string path = here.relative.empty() ? root : root + "/" + here.relative;
    // O_NOFOLLOW: a directory replaced by a link since it was listed is not
    // followed either.
    const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR* listing = fd >= 0 ? fdopendir(fd) : nullptr;
    if (listing == nullptr) {
      if (fd >= 0) close(fd);
      continue;
    }
    while (dirent* e = readdir(listing)) {
      if (++entries > bounds.max_entries) break;
      const char* name = e->d_name;
      if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
      unsigned char type = e->d_type;
      struct stat st;
      if (type == DT_UNKNOWN && fstatat(dirfd(listing), name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        type = IFTODT(st.st_mode);  // a filesystem that does not say in the listing
      }
      const std::string relative = here.relative.empty() ? name : here.relative + "/" + name;
      uint64_t mount = 0;
      if (type == DT_DIR) {
        if (here.depth < bounds.max_depth && MountOf(dirfd(listing), name, &mount) &&
            mount == root_mount) {
          pending.push_back({relative, here.depth + 1});
        }
      } else if ((type == DT_REG || type == DT_LNK) && match(path, name)) {
        found.push_back(relative);
      }
    }
    closedir(listing);
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<std::string> CachedVendorLibraries(const std::string& dir) {
  WalkCache& cache = Cache();
  {
    absl::MutexLock lock(&cache.mu);
    if (auto it = cache.found.find(dir); it != cache.found.end()) return it->second;
  }
  // Walked without the lock, so that one slow walk does not hold up the
  // starts of sandboxes over other directories; a racing walk of the same
  // directory finds the same files, and the first to finish is kept.
  VendorLibraryRule rule;
  std::vector<std::string> found = FindFiles(
      dir, [&rule](const std::string& in, const char* name) { return rule.IsVendorLibrary(in, name); });
  absl::MutexLock lock(&cache.mu);
  return cache.found.emplace(dir, std::move(found)).first->second;
}

}  // namespace ptxbench::sandbox
