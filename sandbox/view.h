#ifndef PTXBENCH_SANDBOX_VIEW_H_
#define PTXBENCH_SANDBOX_VIEW_H_

// Builds the `mounts` of a Policy (policy.h) from host paths: a host path is
// shown at the same path in the view, and every symbolic link on the way
// (merged /usr, /usr/local/cuda -> cuda-13.0, ...) becomes the same link in
// the view, so the path resolves there as it does on the host. Add parents
// before what they contain: a bind covers whatever was added below it.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "sandbox/policy.h"

namespace ptxbench::sandbox {

class ViewBuilder {
 public:
  // Binds `path` (kReadOnly, kReadWrite or kDevice). False, adding nothing,
  // when the path does not exist on the host. A path inside a directory
  // bound earlier is already there and adds nothing.
  bool AddHostPath(const std::string& path, Mount::Kind kind);
  // Adds `mount` as it is (a tmpfs, a bind at another path, a symlink).
  void Add(Mount mount);
  // Hides every vendor library (a regular file, or a link to one, that
  // VendorLibraryRule picks: vendor_library.h) anywhere in the directories
  // bound so far, subdirectories included: an empty file is mounted over each where the view shows it (a
  // link's file at its own path, which must be bound at the same path: then
  // every path to it reads empty, and a link leading out of the view dangles
  // there anyway). The walk (file_walk.h) does not follow links to
  // directories (their files are masked where they are bound), stays on each
  // directory's mount, and stops at 12 levels or 200000 entries per
  // directory. It is done once per directory per process: a library
  // installed after the first walk is seen only after a restart.
  // Every view that builds or runs submitted code calls it, after its last
  // bind of host files.
  void MaskVendorLibraries();
  const std::vector<Mount>& mounts() const { return mounts_; }

 private:
  // The symlink-free host path of `path`, adding the links met on the way.
  std::string Resolve(const std::string& path, int depth);
  bool Covered(const std::string& path) const;
  // The index of the bind that shows `path` in the view (the last one added
  // over it), or -1.
  int ShownBy(const std::string& path) const;
  bool Has(const std::string& target) const;

  std::vector<Mount> mounts_;
};

// The mount options of every tmpfs ptxbench makes for untrusted code:
// `size=bytes`, `nr_inodes` and then `rest` ("mode=0700,uid=..."). The size
// does not bound the number of files, and an empty file takes no block but
// about 1 KiB of the kernel's memory, outside a memory watchdog's count
// (200,000 empty files in a 1 MiB tmpfs took 190 MB of slab; the default
// allows half of RAM's pages): one file per 8 KiB of size, at least 1,024.
std::string TmpfsOptions(uint64_t bytes, absl::string_view rest);

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_VIEW_H_
