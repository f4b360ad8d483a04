#ifndef PTXBENCH_WORKER_COMPILE_VENDOR_CODE_TABLE_H_
#define PTXBENCH_WORKER_COMPILE_VENDOR_CODE_TABLE_H_

// Vendor GPU code known by what it is: a hash of every kernel's machine
// code (each executable section, `.text.<kernel>`, of every cubin) that the
// CUDA toolkit's own libraries carry, made on the worker from the installed
// toolkit and kept on disk. library_check.h looks up each kernel section of
// every cubin a candidate module carries, so a vendor kernel renamed, or
// re-linked into a cubin of its own, is still LIBRARY_FALLBACK
// (docs/SECURITY.md). Per section rather than per cubin: a cubin is easy to
// rebuild around a copied kernel; the kernel's own bytes are what runs.
// Immutable once made: thread-safe.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "worker/compile/gpu_image_scan.h"

namespace ptxbench::worker {

// A library whose GPU code goes into the table, and the name a verdict
// gives it ("cuBLASLt").
struct VendorLibrary {
  std::string path;
  std::string name;
};

// Kernel sections shorter than this are not hashed nor looked up: a few
// instructions (an empty kernel, a fill) can be anyone's.
inline constexpr uint64_t kMinHashedSection = 256;

// The hash of one kernel section's bytes (common/hash.h StableHash64).
uint64_t KernelSectionHash(absl::string_view code);

// Calls `each(name, code)` for every executable section of a cubin
// (EM_CUDA) of at least kMinHashedSection bytes, charging its bytes; true
// from `each` stops it.
absl::StatusOr<bool> ForEachKernelSection(
    const ElfView& elf,
    const std::function<bool(absl::string_view name, absl::string_view code)>& each);

class VendorCodeTable {
 public:
  // Reads every library's GPU code; kInvalidArgument naming a library the
  // scan refuses.
  static absl::StatusOr<std::unique_ptr<VendorCodeTable>> Build(
      const std::vector<VendorLibrary>& libraries);

  // The vendor libraries of the toolkit found in `dirs` (cuBLAS, cuBLASLt,
  // cuDNN: libcublas*.so*, libcublasLt*.so*, libcudnn*.so*), one per real
  // file, in a stable order.
  static std::vector<VendorLibrary> FindLibraries(const std::vector<std::string>& dirs);

  // The table of `libraries` from `cache_dir` when its key (every
  // library's path, size and mtime) matches, else built and written there
  // (best effort; empty cache_dir: not kept).
  static absl::StatusOr<std::unique_ptr<VendorCodeTable>> LoadOrBuild(
      const std::vector<VendorLibrary>& libraries, const std::string& cache_dir);

  // The library whose code hashes to `hash`; empty when none.
  absl::string_view Find(uint64_t hash) const;

  size_t size() const { return entries_.size(); }
  // Names the libraries and their versions (sizes and mtimes): part of the
  // build cache's key, so a verdict made without the table, or with
  // another, is not reused.
  const std::string& identity() const { return identity_; }

  // The table's file form; exposed for its tests.
  std::string Serialize() const;
  static absl::StatusOr<std::unique_ptr<VendorCodeTable>> Deserialize(absl::string_view bytes);

  // From hashes (tests).
  static std::unique_ptr<VendorCodeTable> FromHashes(const std::string& library,
                                                     std::vector<uint64_t> hashes);

 private:
  struct Entry {
    uint64_t hash;
    uint32_t library;  // into names_
    bool operator<(const Entry& o) const { return hash < o.hash; }
  };
  void Sort();

  std::vector<Entry> entries_;  // sorted by hash
  std::vector<std::string> names_;
  std::string identity_;
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_VENDOR_CODE_TABLE_H_
