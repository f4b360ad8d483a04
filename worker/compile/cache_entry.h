#ifndef PTXBENCH_WORKER_COMPILE_CACHE_ENTRY_H_
#define PTXBENCH_WORKER_COMPILE_CACHE_ENTRY_H_

// A build's entry in the compile cache (compiler.h), private to
// worker/compile: a folder named by the build's cache key that holds what
// the build left (the module and its PTX, or only the sources of a failed
// build), `compile.log` and `result.json` (the CompileResult but its log).
// A build runs in a fresh ".build-*" folder beside the entries and is moved
// into place whole, so a reader never sees half an entry; BuildCache
// (build_cache.h) bounds the folder.

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/compile/compiler.h"

namespace ptxbench::worker::cache_entry {

inline constexpr char kResultFile[] = "result.json";
inline constexpr char kLogFile[] = "compile.log";

// A fresh build folder, ".build-XXXXXX" under `parent` (made if missing).
absl::StatusOr<std::string> MakeTempDir(const std::string& parent);

// Writes `result`'s log and result file into the build folder `dir`.
absl::Status WriteResult(const std::string& dir, const CompileResult& result);

// A stored build, or an error when it is missing or damaged (DATA_LOSS).
// Its paths point into `dir`; cache_hit is set.
absl::StatusOr<CompileResult> LoadCached(const std::filesystem::path& dir);

// Moves a finished build folder to its cache entry; another build of the
// same key may have published first (then its entry is used), or a corrupt
// entry may be in the way (then it is replaced).
absl::StatusOr<CompileResult> Publish(const std::string& dir,
                                      const std::filesystem::path& final_dir,
                                      const std::string& cache_key);

}  // namespace ptxbench::worker::cache_entry

#endif  // PTXBENCH_WORKER_COMPILE_CACHE_ENTRY_H_
