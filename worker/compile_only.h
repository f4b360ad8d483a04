#ifndef PTXBENCH_WORKER_COMPILE_ONLY_H_
#define PTXBENCH_WORKER_COMPILE_ONLY_H_

// Compile-only evaluation: what a worker without a GPU offers. It builds the
// kernel exactly as a full evaluation would and reports the compile log,
// per-kernel resources, the PTX census and vendor-library use. Status COMPILED
// means "it builds": nothing was run, so there is no correctness or speed, and
// all_passed is always false.

#include <atomic>
#include <string>

#include "absl/time/time.h"

#include "executor/task_handler.h"
#include "ptxbench/v1/common.pb.h"
#include "worker/compile/compiler.h"
#include "workloads/registry.h"

namespace ptxbench::worker {

class WorkerMetrics;

// A kernel built for evaluation: the result so far (status, compile log,
// resources, census) and, when it built, what running it needs.
struct CompiledKernel {
  ptxbench::v1::EvalResult result;  // status COMPILED when it built
  const workloads::Definition* definition = nullptr;  // null after INFRA_ERROR
  std::string artifact;  // kernel.so (cuda) or kernel.cubin (ptx)
  absl::Time start;      // when the evaluation began (for wall_time_ms)
  bool built() const { return result.status() == ptxbench::v1::COMPILED; }
};

// The compile step shared by compile-only and full evaluation. Never fails:
// an unknown definition or a missing toolkit is status INFRA_ERROR.
CompiledKernel CompileForEvaluation(Compiler& compiler,
                                    const workloads::DefinitionRegistry& definitions,
                                    const ptxbench::v1::EvalRequest& request,
                                    const std::string& worker_id,
                                    const std::string& toolkit_version);

// Never fails: infrastructure problems (unknown definition, missing nvcc)
// come back as status INFRA_ERROR with `error` set.
ptxbench::v1::EvalResult EvaluateCompileOnly(Compiler& compiler,
                                             const workloads::DefinitionRegistry& definitions,
                                             const ptxbench::v1::EvalRequest& request,
                                             const std::string& worker_id,
                                             const std::string& toolkit_version);

// Runs eval tasks compile-only. A FULL-mode task (which the scheduler routes
// only to GPU workers) is refused as an INFRA failure so it goes elsewhere.
class CompileOnlyHandler final : public executor::TaskHandler {
 public:
  // Not owned; must outlive the handler. `metrics` gets compile times.
  // `toolkit_version` is reported with every result (Compiler::ToolkitVersion,
  // asked once at start-up).
  CompileOnlyHandler(Compiler* compiler, const workloads::DefinitionRegistry* definitions,
                     WorkerMetrics* metrics, std::string worker_id, std::string toolkit_version)
      : compiler_(compiler),
        definitions_(definitions),
        metrics_(metrics),
        worker_id_(std::move(worker_id)),
        toolkit_version_(std::move(toolkit_version)) {}

  ptxbench::v1::CompleteRequest Run(const ptxbench::v1::Task& task,
                                    const std::atomic<bool>& cancelled) override;

 private:
  Compiler* compiler_;
  const workloads::DefinitionRegistry* definitions_;
  WorkerMetrics* metrics_;
  std::string worker_id_;
  std::string toolkit_version_;
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_ONLY_H_
