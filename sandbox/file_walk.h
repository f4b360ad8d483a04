#ifndef PTXBENCH_SANDBOX_FILE_WALK_H_
#define PTXBENCH_SANDBOX_FILE_WALK_H_

// Finds the files of a host directory tree that a rule picks: the vendor
// libraries (vendor_library.h) that ViewBuilder::MaskVendorLibraries (view.h)
// hides in every directory a sandbox binds, at any depth.

#include <functional>
#include <string>
#include <vector>

namespace ptxbench::sandbox {

// How far a walk goes, so that a huge tree cannot stall a sandbox start
// (/usr/lib of a development machine holds about 90000 entries).
struct WalkBounds {
  int max_depth = 12;        // directory levels below the root
  int max_entries = 200000;  // directory entries read, all levels together
};

// Picks an entry `name` of the symlink-free host directory `dir`.
using FileMatch = std::function<bool(const std::string& dir, const char* name)>;

// The paths, relative to `dir` and sorted, of the entries that are not
// directories (files, and symbolic links, which the caller follows to
// decide) and that `match` picks. Descends only into
// real directories on the mount `dir` is on: never through a symbolic link
// (its target is walked where it is bound), nor into another mount (a plain
// bind does not show it). Kernel filesystems (sysfs, procfs) are not walked:
// their files are no libraries. Entries past `bounds` are not seen.
std::vector<std::string> FindFiles(const std::string& dir, const FileMatch& match,
                                   const WalkBounds& bounds = {});

// The vendor libraries below `dir` (VendorLibraryRule, vendor_library.h),
// found by FindFiles with the default bounds once per directory in this
// process and remembered: the same library directories are bound at every
// sandbox start. So a library installed after the first walk is seen (and
// masked) only after a restart. Thread-safe.
std::vector<std::string> CachedVendorLibraries(const std::string& dir);

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_FILE_WALK_H_
