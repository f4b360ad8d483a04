#ifndef PTXBENCH_WORKER_COMPILE_COMPILER_H_
#define PTXBENCH_WORKER_COMPILE_COMPILER_H_

// Builds a submission as docs/MEASUREMENT.md ("Building a submission")
// describes (CPU only: nvcc and ptxas run as subprocesses under a deadline) and
// reports what the harness and the model need: status, compile log, per-kernel
// resources from ptxas -v, the PTX census and vendor-library use. Builds are
// cached on disk by sha256 of everything that determines them.
//
// Thread-safe: Compile may run concurrently (a compile pool); concurrent
// builds of one key both build and the first to publish wins.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ptxbench/v1/common.pb.h"
#include "sandbox/policy.h"
#include "worker/compile/build_cache.h"
#include "worker/compile/vendor_code_table.h"
#include "workloads/definition.h"

namespace ptxbench::worker {

// The sandbox of every nvcc/ptxas run (sandbox/policy.h, docs/SECURITY.md).
struct CompileSandboxOptions {
  // Off only where the machine cannot make namespaces (the worker says so
  // at start); then the tools run as plain child processes.
  bool enabled = true;
  uid_t uid = sandbox::kDefaultUid;  // when the worker runs as root
  gid_t gid = sandbox::kDefaultUid;
  uint64_t memory_bytes = sandbox::kDefaultMemoryBytes;  // over it: COMPILE_ERROR
  int max_processes = sandbox::kDefaultMaxProcesses;
  std::string cgroup_parent;  // empty: the watchdog
  // The most one file of a build may hold (RLIMIT_FSIZE): a tool that
  // writes more is stopped, and the build is the kernel's COMPILE_ERROR.
  uint64_t file_bytes = uint64_t{256} << 20;
};

struct CompilerOptions {
  std::string nvcc = "/usr/local/cuda/bin/nvcc";
  std::string ptxas = "/usr/local/cuda/bin/ptxas";
  // Lists the built SASS for its census (sass_census.h); none when the file
  // is missing (this toolkit's Debian machine has no cuobjdump).
  std::string cuobjdump = "/usr/local/cuda/bin/cuobjdump";
  // Builds live in cache_dir/<cache_key>/. Empty: no cache; each build gets a
  // fresh directory under the system temp dir, which the caller may delete.
  std::string cache_dir;
  // The cache's bound (build_cache.h; 0: unbounded), and how long an entry
  // stays after its last use whatever the bound.
  uint64_t cache_bytes = uint64_t{20} << 30;
  absl::Duration cache_grace = absl::Minutes(30);
  // The most a built module (kernel.so, kernel.cubin) or its PTX may hold:
  // past it the build is a COMPILE_ERROR and neither is kept. Honest
  // modules take a few MiB; what a source carries in (.incbin of toolchain
  // files, initialized arrays) counts.
  uint64_t module_bytes = uint64_t{32} << 20;
  // Vendor GPU code by its hashes (vendor_code_table.h), looked up for every
  // cubin a built module carries; null: kernel names only.
  std::shared_ptr<const VendorCodeTable> vendor_code;
  // The directory holding ptxbench/kernel_abi.h (worker/kernel_abi).
  std::string abi_include_dir;
  // For the whole build (all passes together).
  absl::Duration deadline = absl::Minutes(2);
  CompileSandboxOptions sandbox;
};

// The compiler's sandbox: the toolchain (nvcc's toolkit, the host compiler
// and its headers and libraries) read-only with every vendor library masked
// (sandbox/vendor_library.h), the ABI header read-only, the build directory
// `build_dir` writable; nothing else exists, so an #include of any other
// file is "not found" and its content never reaches a log. Public for
// tests/view_walk_test.cc, which walks what it shows.
sandbox::Policy CompilerPolicy(const CompilerOptions& o, const std::string& build_dir);

struct CompileRequest {
  // The kernel source, or for "solution" the FlashInfer-Trace solution JSON.
  std::string source;
  std::string language;  // "cuda" | "solution" | "ptx" (worker/compile/submission.h)
  // The run() signature comes from it; required but for "ptx". Not owned.
  const workloads::Definition* definition = nullptr;
  // What to build for: the GPU that will run it, e.g. "sm_90a"
  // (common/gpu_arch.h CompileTarget). Required.
  std::string target;
};

struct CompileResult {
  // COMPILED, COMPILE_ERROR, LIBRARY_FALLBACK or TIMEOUT.
  ptxbench::v1::EvalStatus status = ptxbench::v1::EVAL_STATUS_UNSPECIFIED;
  std::string log;  // the commands and their output (ptxas -v lines included)
  std::vector<ptxbench::v1::KernelResources> resources;  // one per entry function
  ptxbench::v1::PtxCensus ptx;
  // Unset when there is no cuobjdump, or it could not list the artifact.
  std::optional<ptxbench::v1::SassCensus> sass;
  std::string artifact_path;  // kernel.so (cuda) or kernel.cubin (ptx); empty on failure
  std::string ptx_path;       // kernel.ptx; empty when none was produced
  std::string cache_key;
  bool cache_hit = false;
  std::string library;  // "cuBLAS", "cuBLASLt", "cuDNN", "CUTLASS" when LIBRARY_FALLBACK
};

class Compiler {
 public:
  explicit Compiler(CompilerOptions options);

  // Builds `request`. The kernel's faults are a status in the result; errors
  // are infrastructure problems only: kInvalidArgument for a bad request,
  // kFailedPrecondition when a tool or the ABI header is missing, kInternal
  // for file-system failures.
  absl::StatusOr<CompileResult> Compile(const CompileRequest& request);

  // The identifying lines of `tool --version` (nvcc or ptxas), e.g.
  // "Cuda compilation tools, release 13.0, V13.0.88; Build cuda_13.0.r13.0/...".
  static absl::StatusOr<std::string> ToolkitVersion(const std::string& nvcc);

 private:
  absl::StatusOr<std::string> CachedVersion(const std::string& tool);
  // The ABI headers' paths and texts (for the cache key), read once.
  absl::StatusOr<std::string> CachedAbiHeaders();

  const CompilerOptions options_;
  std::unique_ptr<BuildCache> cache_;  // null without a cache_dir
  absl::Mutex mu_;
  std::map<std::string, std::string> versions_ ABSL_GUARDED_BY(mu_);
  std::string abi_headers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_COMPILER_H_
