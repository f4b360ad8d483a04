#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_JIT_IMAGES_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_JIT_IMAGES_H_

// The images a Triton candidate's JIT host built (isolation.h): the
// ".cubin" files of its cache, each named by the first 16 hex digits of its
// sha256 (census.h's CensusRules::jit_images). The JIT host ran submitted
// code, so the cache is read as hostile: regular files only (no link is
// followed), bounded in size, count and depth; what does not fit is left
// out, and its kernels then count as nobody's.

#include <set>
#include <string>

namespace ptxbench::runner {

inline constexpr int kMaxJitImages = 1024;
inline constexpr long kMaxJitImageBytes = 64L << 20;

struct JitCache {
  std::set<std::string> tags;  // of the images read
  int directories = 0;         // entered, the cache's own included
  int files = 0;               // of any kind, images or not
  int unread = 0;              // ".cubin" entries that could not be read as an image
  std::string first_unread;    // the first of them and why, in words
  std::string missing;         // why the cache itself could not be opened; else empty
};

// The cache `name` under the directory `parent_fd` (Triton's layout:
// <name>/<key>/<image>.cubin). Through a descriptor: the harness reads the
// cache after it dropped to its own uid, which may not search the
// directories above the JIT's disk (Isolation holds it open from before).
JitCache ScanJitCache(int parent_fd, const std::string& name);

// What a scan found, in words for the trace's log: "3 images (cache: 12
// files in 4 directories)", with what could not be read.
std::string DescribeJitCache(const JitCache& cache);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_JIT_IMAGES_H_
