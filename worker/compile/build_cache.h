#ifndef PTXBENCH_WORKER_COMPILE_BUILD_CACHE_H_
#define PTXBENCH_WORKER_COMPILE_BUILD_CACHE_H_

// The bound on the build cache's disk (compiler.h): every build of a new
// source is kept, so without one a submitter that varies its source fills
// the worker's disk, and with it its neighbours' builds and, on one
// machine, the scheduler's database. Past `max_bytes` the least recently
// used entries go (an entry's use is its result file's mtime, renewed on
// every hit), but never one used within `grace`: an evaluation reads its
// module minutes after the build, possibly in another worker sharing the
// folder. Unfinished build folders (".build-*") older than `grace` are
// left from a crash and go too. Nothing else in the folder is counted or
// touched: only entries named by a cache key (64 hex digits) and build
// folders, so a cache folder given by mistake (a home) loses nothing else.
//
// Thread-safe. Several processes may share a folder: each bounds it, and a
// removal that loses a race to another is harmless.

#include <cstdint>
#include <filesystem>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ptxbench::worker {

class BuildCache {
 public:
  // The file whose mtime is an entry's last use.
  static constexpr char kUseMark[] = "result.json";

  // max_bytes 0: unbounded.
  BuildCache(std::string dir, uint64_t max_bytes, absl::Duration grace);

  // Renews an entry's last use (a cache hit).
  static void Touch(const std::filesystem::path& entry);

  struct Pruned {
    int entries = 0;      // entries and stale build folders removed
    uint64_t bytes = 0;   // what they held
    uint64_t kept = 0;    // what the folder holds after
  };
  // A new entry of `bytes` was published; prunes when the folder may be
  // over the bound (while nothing was old enough to go at the last walk,
  // at most once per `grace`/10).
  Pruned Added(uint64_t bytes);
  // Walks the folder and removes what goes, now.
  Pruned Prune();

  // The bytes of every regular file under `dir` (not following links).
  static uint64_t BytesUnder(const std::filesystem::path& dir);

 private:
  const std::string dir_;
  const uint64_t max_bytes_;
  const absl::Duration grace_;
  absl::Mutex mu_;
  bool known_ ABSL_GUARDED_BY(mu_) = false;  // estimate_ came from a walk
  uint64_t estimate_ ABSL_GUARDED_BY(mu_) = 0;
  bool stuck_ ABSL_GUARDED_BY(mu_) = false;  // the last walk left it over the bound
  absl::Time last_walk_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_BUILD_CACHE_H_
