#ifndef PTXBENCH_WORKER_GPU_EVAL_H_
#define PTXBENCH_WORKER_GPU_EVAL_H_

// Full evaluation on a GPU (DESIGN §5), worker side: build the kernel (CPU,
// any thread), then run `ptxbench-runner` for it in a sandbox pinned to one
// GPU (worker/runner/runner.h says what the runner does) and turn what it
// wrote — or how it died — into an EvalResult. The candidate's code never
// runs in this process.

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ptxbench/v1/common.pb.h"
#include "worker/compile/compiler.h"
#include "worker/compile_only.h"
#include "worker/gpu/device_info.h"
#include "workloads/registry.h"

namespace ptxbench::worker {

struct GpuEvalOptions {
  std::string runner_path;  // the ptxbench-runner binary
  // For one runner process (every workload of one evaluation). Past it the
  // process group is killed and the workload in progress is a TIMEOUT.
  absl::Duration deadline = absl::Minutes(10);
  absl::Duration health_deadline = absl::Minutes(1);
  // Root of the input seeds; 0: derived from the kernel's sha256, so the
  // same kernel sees the same inputs when evaluated again.
  uint64_t seed = 0;
  int trials = 0;  // 0: the definition's
  int warmup_calls = 10;
  int timed_calls = 50;
  std::string temp_root = "/tmp";
};

// The runner next to this executable or in the build tree
// ($PTXBENCH_RUNNER first); empty when none is found.
std::string FindRunner();

class GpuEvaluator {
 public:
  // Not owned; must outlive the evaluator. Thread-safe: Compile from many
  // threads, Run from one thread per GPU.
  GpuEvaluator(Compiler* compiler, const workloads::DefinitionRegistry* definitions,
               GpuEvalOptions options, std::string worker_id, std::string toolkit_version);

  // The CPU part: build (cached), resources, census, library check.
  CompiledKernel Compile(const ptxbench::v1::EvalRequest& request);

  // The GPU part, for a kernel that built: correctness and timing of every
  // requested workload on `gpu`. Sets `*suspect` when the GPU should be
  // checked before its next task (the runner crashed, hung or lost its CUDA
  // context). A kernel that did not build is returned as it is.
  ptxbench::v1::EvalResult Run(const ptxbench::v1::EvalRequest& request, CompiledKernel compiled,
                               const gpu::GpuInfo& gpu, bool* suspect);

  // Compile then Run.
  ptxbench::v1::EvalResult Evaluate(const ptxbench::v1::EvalRequest& request,
                                    const gpu::GpuInfo& gpu, bool* suspect);

  // A fresh runner's self-test on GPU `gpu_index`: OK, or why not.
  absl::Status CheckHealth(int gpu_index);

 private:
  Compiler* compiler_;
  const workloads::DefinitionRegistry* definitions_;
  const GpuEvalOptions options_;
  const std::string worker_id_;
  const std::string toolkit_version_;
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_GPU_EVAL_H_
