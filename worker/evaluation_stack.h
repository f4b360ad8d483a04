#ifndef PTXBENCH_WORKER_EVALUATION_STACK_H_
#define PTXBENCH_WORKER_EVALUATION_STACK_H_

// One way to build what evaluates kernels on this machine, for the worker
// daemon and for `ptxbench eval --local` alike, so both make the same
// start-up checks in the same order: the sandbox probed (what protects the
// node, and what is missing), the CUDA toolkit found, the runner found, the
// installation readable by the sandbox uid, the GPUs a full evaluation may
// use (none: compile-only, with the reason). Only then is the evaluator
// built, over options the caller may still adjust (PyTorch references,
// metrics).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/protections.h"
#include "worker/compile/compiler.h"
#include "worker/gpu/device_info.h"
#include "worker/gpu_eval.h"
#include "workloads/registry.h"

namespace ptxbench::worker {

struct EvaluationSettings {
  SandboxSettings sandbox;
  std::string cache_dir;      // the build cache; empty: none
  uint64_t cache_bytes = CompilerOptions().cache_bytes;  // its bound (0: none)
  bool compile_only = false;  // offer no GPU, even where there is one
  // The GPU evaluation's own settings (deadline, seed, calls); Create fills
  // in its sandbox and runner.
  GpuEvalOptions gpu;
};

class EvaluationStack {
 public:
  // kFailedPrecondition naming what stops it: no CUDA toolkit, or an
  // installation the sandbox uid cannot read.
  static absl::StatusOr<std::unique_ptr<EvaluationStack>> Create(const EvaluationSettings& settings);

  const sandbox::Protections& protections() const { return protections_; }
  const std::string& toolkit_version() const { return toolkit_version_; }
  const CompilerOptions& compiler_options() const { return compiler_options_; }
  Compiler& compiler() { return *compiler_; }
  // The GPUs a full evaluation may use; empty: compile-only, for the reason
  // why_no_gpu() gives.
  const std::vector<gpu::GpuInfo>& gpus() const { return gpus_; }
  const std::string& why_no_gpu() const { return why_no_gpu_; }
  // The GPU evaluation's options, to adjust before Evaluator().
  GpuEvalOptions& gpu_options() { return gpu_options_; }

  // Built at the first call, over the options as they stand then.
  GpuEvaluator& Evaluator(const workloads::DefinitionRegistry* definitions,
                          const std::string& worker_id);

 private:
  EvaluationStack() = default;
  // Fills gpus_ or why_no_gpu_.
  void FindGpus(bool compile_only);

  sandbox::Protections protections_;
  CompilerOptions compiler_options_;
  GpuEvalOptions gpu_options_;
  std::string toolkit_version_;
  std::unique_ptr<Compiler> compiler_;
  std::vector<gpu::GpuInfo> gpus_;
  std::string why_no_gpu_;
  std::unique_ptr<GpuEvaluator> evaluator_;
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_EVALUATION_STACK_H_
