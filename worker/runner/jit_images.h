#ifndef PTXBENCH_WORKER_RUNNER_JIT_IMAGES_H_
#define PTXBENCH_WORKER_RUNNER_JIT_IMAGES_H_

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

std::set<std::string> JitImageTags(const std::string& cache_dir);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_JIT_IMAGES_H_
