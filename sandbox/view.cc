#include "sandbox/view.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ptxbench::sandbox {
namespace {

bool IsBind(const Mount& m) {
  return m.kind == Mount::Kind::kReadOnly || m.kind == Mount::Kind::kReadWrite ||
         m.kind == Mount::Kind::kDevice;
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

// Links deeper than this are not followed (a loop, or a hostile layout).
constexpr int kMaxLinks = 40;

}  // namespace

const std::vector<std::string>& VendorLibraryPrefixes() {
  static const auto* prefixes = new std::vector<std::string>{
      "libcublas", "libcudnn", "libcufft", "libcurand", "libcusolver", "libcusparse",
      "libcutensor", "libnvblas", "libnccl", "libnvinfer", "libnvrtc", "libnvJitLink",
      "libnvptxcompiler", "libcupti", "libnvperf", "libcutlass", "libtorch", "libc10"};
  return *prefixes;
}

bool ViewBuilder::Covered(const std::string& path) const {
  for (const Mount& m : mounts_) {
    if (IsBind(m) && (path == m.target || absl::StartsWith(path, m.target + "/"))) return true;
  }
  return false;
}

bool ViewBuilder::Has(const std::string& target) const {
  for (const Mount& m : mounts_) {
    if (m.target == target) return true;
  }
  return false;
}

std::string ViewBuilder::Resolve(const std::string& path, int depth) {
  if (depth > kMaxLinks) return "";
  const std::vector<std::string> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  std::string current;  // symlink-free so far
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == ".") continue;
    if (parts[i] == "..") {
      current = current.substr(0, current.rfind('/'));  // current has no links
      continue;
    }
    const std::string next = current + "/" + parts[i];
    struct stat st;
    if (lstat(next.c_str(), &st) != 0) return "";
    if (!S_ISLNK(st.st_mode)) {
      current = next;
      continue;
    }
    char link[PATH_MAX];
    const ssize_t n = readlink(next.c_str(), link, sizeof(link) - 1);
    if (n <= 0) return "";
    link[n] = '\0';
    if (!Covered(next) && !Has(next)) mounts_.push_back({Mount::Kind::kSymlink, link, next});
    std::string rest = absl::StrJoin(parts.begin() + static_cast<long>(i) + 1, parts.end(), "/");
    std::string target = link[0] == '/' ? std::string(link) : current + "/" + link;
    return Resolve(rest.empty() ? target : target + "/" + rest, depth + 1);
  }
  return current.empty() ? "/" : current;
}

bool ViewBuilder::AddHostPath(const std::string& path, Mount::Kind kind) {
  const std::string real = Resolve(path, 0);
  if (real.empty() || RealPath(real) != real) return false;
  if (Covered(real) || Has(real)) return true;
  mounts_.push_back({kind, real, real});
  return true;
}

void ViewBuilder::Add(Mount mount) { mounts_.push_back(std::move(mount)); }

void ViewBuilder::MaskFiles(const std::vector<std::string>& prefixes) {
  std::vector<Mount> masks;
  for (const Mount& m : mounts_) {
    if (m.kind != Mount::Kind::kReadOnly && m.kind != Mount::Kind::kReadWrite) continue;
    DIR* dir = opendir(m.source.c_str());
    if (dir == nullptr) continue;
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      bool vendor = false;
      for (const std::string& p : prefixes) vendor |= absl::StartsWith(name, p);
      if (!vendor) continue;
      const std::string host = m.source + "/" + name;
      // A mount over a link lands on what it points to, which must be in
      // the view (a link leading out of it dangles there anyway).
      const std::string real = RealPath(host);
      struct stat st;
      if (real.empty() || stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || !Covered(real)) {
        continue;
      }
      masks.push_back({Mount::Kind::kMask, "", m.target + "/" + name});
    }
    closedir(dir);
  }
  mounts_.insert(mounts_.end(), masks.begin(), masks.end());
}

}  // namespace ptxbench::sandbox
