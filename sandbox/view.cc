#include "sandbox/view.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sandbox/file_walk.h"

namespace ptxbench::sandbox {
namespace {

bool IsBind(const Mount& m) {
  return m.kind == Mount::Kind::kReadOnly || m.kind == Mount::Kind::kReadWrite ||
         m.kind == Mount::Kind::kReadWriteExec || m.kind == Mount::Kind::kDevice;
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

// Links deeper than this are not followed (a loop, or a hostile layout).
constexpr int kMaxLinks = 40;

}  // namespace

std::string TmpfsOptions(uint64_t bytes, absl::string_view rest) {
  const uint64_t inodes = std::max<uint64_t>(1024, bytes / 8192);
  return absl::StrCat("size=", bytes, ",nr_inodes=", inodes, rest.empty() ? "" : ",", rest);
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

int ViewBuilder::ShownBy(const std::string& path) const {
  int shown_by = -1;
  for (size_t i = 0; i < mounts_.size(); ++i) {
    const Mount& m = mounts_[i];
    if (IsBind(m) && (path == m.target || absl::StartsWith(path, m.target + "/"))) {
      shown_by = static_cast<int>(i);
    }
  }
  return shown_by;
}

void ViewBuilder::MaskVendorLibraries() {
  std::set<std::string> targets;  // a file behind several links is masked once
  for (size_t i = 0; i < mounts_.size(); ++i) {
    const Mount& m = mounts_[i];
    if (m.kind != Mount::Kind::kReadOnly && m.kind != Mount::Kind::kReadWrite &&
        m.kind != Mount::Kind::kReadWriteExec) {
      continue;
    }
    for (const std::string& relative : CachedVendorLibraries(m.source)) {
      const std::string host = m.source + "/" + relative;
      struct stat st;
      if (lstat(host.c_str(), &st) != 0) continue;
      if (S_ISREG(st.st_mode)) {
        // Unless a bind added later over a subdirectory shows something else.
        const std::string target = m.target + "/" + relative;
        if (ShownBy(target) == static_cast<int>(i)) targets.insert(target);
        continue;
      }
      // A link: the file it leads to, at its own path, where the view shows
      // the host's path there (then every path to it reads empty; a link
      // leading out of the view dangles there anyway).
      const std::string real = RealPath(host);
      if (real.empty() || stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      const int shown_by = ShownBy(real);
      if (shown_by >= 0 && mounts_[shown_by].source == mounts_[shown_by].target) {
        targets.insert(real);
      }
    }
  }
  for (const std::string& target : targets) mounts_.push_back({Mount::Kind::kMask, "", target});
}

}  // namespace ptxbench::sandbox
