#include "worker/compile_only.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/gpu_arch.h"
#include "worker/compile/submission.h"
#include "worker/worker_metrics.h"
#include "workloads/launch_spec.h"

namespace ptxbench::worker {

namespace v1 = ::ptxbench::v1;

CompiledKernel CompileForEvaluation(Compiler& compiler,
                                    const workloads::DefinitionRegistry& definitions,
                                    const v1::EvalRequest& request, const std::string& worker_id,
                                    const std::string& toolkit_version) {
  CompiledKernel k;
  k.start = absl::Now();
  v1::EvalResult& result = k.result;
  result.set_worker_id(worker_id);
  result.set_toolkit_version(toolkit_version);
  absl::StatusOr<const workloads::Definition*> definition = definitions.Find(request.definition());
  if (!definition.ok()) {
    result.set_status(v1::INFRA_ERROR);
    result.set_error(std::string(definition.status().message()));
    return k;
  }
  result.set_dataset((*definition)->dataset);
  result.set_definition_version((*definition)->version);
  // Built for the first architecture the request names: the handler narrows
  // it to the GPU that will run the kernel (gpu_worker.cc).
  const std::string& arch = request.architectures().empty() ? DefaultArchitectures().front()
                                                            : request.architectures(0);
  if (request.language() == "triton") {
    // Triton's JIT builds it on the GPU, in the candidate's sandbox, before
    // anything is timed (worker/runner/hosts/triton_host.py); its time is in the
    // evaluation's log.
    k.definition = *definition;
    result.set_compile_target(CompileTarget(arch));
    const std::string refusal = RefuseTritonSource(request.kernel_source());
    result.set_status(refusal.empty() ? v1::COMPILED : v1::COMPILE_ERROR);
    result.set_compile_log(refusal.empty() ? "Triton: compiled by Triton's JIT on the GPU that "
                                             "runs it, before timing\n"
                                           : refusal + "\n");
    result.set_all_passed(false);
    return k;
  }
  CompileRequest compile{request.kernel_source(), request.language(), *definition,
                         CompileTarget(arch)};
  result.set_compile_target(compile.target);
  absl::StatusOr<CompileResult> built = compiler.Compile(compile);
  if (!built.ok()) {
    result.set_status(v1::INFRA_ERROR);
    result.set_error(absl::StrCat("compile infrastructure: ", built.status().message()));
    return k;
  }
  k.definition = *definition;
  k.artifact = built->artifact_path;
  result.set_status(built->status);
  result.set_compile_log(built->log);
  for (const v1::KernelResources& r : built->resources) *result.add_resources() = r;
  *result.mutable_ptx() = built->ptx;
  if (built->sass) *result.mutable_sass() = *built->sass;
  result.set_all_passed(false);
  if (k.built() && request.language() == "ptx") {
    // A module that assembles still needs a launch spec that works at every
    // workload; the model is told what is wrong like any build error.
    std::vector<std::string> entries;
    for (const v1::KernelResources& r : built->resources) entries.push_back(r.kernel_name());
    absl::Status spec = workloads::CheckLaunchSpec(request.kernel_source(), **definition, entries);
    if (!spec.ok()) {
      result.set_status(v1::COMPILE_ERROR);
      result.set_compile_log(absl::StrCat(result.compile_log(), "\n", spec.message(), "\n"));
    }
  }
  return k;
}

v1::EvalResult EvaluateCompileOnly(Compiler& compiler,
                                   const workloads::DefinitionRegistry& definitions,
                                   const v1::EvalRequest& request, const std::string& worker_id,
                                   const std::string& toolkit_version) {
  CompiledKernel k = CompileForEvaluation(compiler, definitions, request, worker_id, toolkit_version);
  // Nothing ran: never a pass.
  k.result.set_wall_time_ms(absl::ToInt64Milliseconds(absl::Now() - k.start));
  return k.result;
}

v1::CompleteRequest CompileOnlyHandler::Run(const v1::Task& task, const std::atomic<bool>&) {
  if (task.kind() != v1::EVAL) {
    return executor::FailureReport(v1::INFRA, "a worker was given a non-eval task");
  }
  if (task.eval().mode() != v1::COMPILE_ONLY) {
    return executor::FailureReport(
        v1::INFRA, absl::StrCat("worker ", worker_id_, " has no GPU: it evaluates compile-only"));
  }
  v1::CompleteRequest out;
  const absl::Time start = absl::Now();
  *out.mutable_eval() = EvaluateCompileOnly(*compiler_, *definitions_, task.eval(), worker_id_,
                                             toolkit_version_);
  metrics_->Compiled(absl::Now() - start);
  return out;
}

}  // namespace ptxbench::worker
