#ifndef PTXBENCH_SANDBOX_FILE_WALK_H_
#define PTXBENCH_SANDBOX_FILE_WALK_H_

// Finds the files of a host directory tree whose names start with given
// prefixes: the vendor libraries that ViewBuilder::MaskFiles (view.h) hides
// in every directory a sandbox binds, at any depth.

#include <string>
#include <vector>

namespace ptxbench::sandbox {

// How far a walk goes, so that a huge tree cannot stall a sandbox start
// (/usr/lib of a development machine holds about 90000 entries).
struct WalkBounds {
  int max_depth = 12;        // directory levels below the root
  int max_entries = 200000;  // directory entries read, all levels together
};

// The paths, relative to `dir` and sorted, of the entries that are not
// directories (files, and symbolic links, which the caller follows to
// decide) and whose names start with one of `prefixes`. Descends only into
// real directories on the mount `dir` is on: never through a symbolic link
// (its target is walked where it is bound), nor into another mount (a plain
// bind does not show it). Kernel filesystems (sysfs, procfs) are not walked:
// their files are no libraries. Entries past `bounds` are not seen.
std::vector<std::string> FindFilesByPrefix(const std::string& dir,
                                           const std::vector<std::string>& prefixes,
                                           const WalkBounds& bounds = {});

// FindFilesByPrefix with the default bounds, walked once per (dir, prefixes)
// in this process and remembered: the same library directories are bound at
// every sandbox start. So a library installed after the first walk is seen
// (and masked) only after a restart. Thread-safe.
std::vector<std::string> CachedFilesByPrefix(const std::string& dir,
                                             const std::vector<std::string>& prefixes);

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_FILE_WALK_H_
