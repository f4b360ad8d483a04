// direct_call: one call of a CUDA submission outside ptxbench's harness and
// sandbox, for Nsight Compute to profile directly, so that the worker's
// profile summary (docs/MEASUREMENT.md, "Profiles") can be checked against
// ncu's own run of the same kernel (bench/gpu/profile_check.sh):
//   direct_call --definition D --kernel FILE.cu [--workload UUID] [--calls N]
//       builds FILE.cu with the worker's compiler, fills the inputs of the
//       workload (the profile's own choice when none is given) as an
//       evaluation does, and calls the kernel N times on one stream;
//   direct_call --print-metrics
//       the metrics a worker's profile asks ncu for (comma-separated);
//   direct_call --summarize FILE.csv
//       ncu's raw CSV page summarized and printed as the feedback prints it.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_join.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/gpu_arch.h"
#include "common/status_macros.h"
#include "results/eval_text.h"
#include "worker/compile/compiler.h"
#include "worker/gpu/device_info.h"
#include "worker/gpu/timing.h"
#include "worker/profile/ncu_summary.h"
#include "worker/profile/workload_choice.h"
#include "worker/runner/harness/prepared_workload.h"
#include "worker/runner/hosts/candidate.h"
#include "worker/runner/measure/references.h"
#include "worker/runner/measure/workload_eval.h"
#include "workloads/registry.h"

ABSL_FLAG(std::string, definition, "", "the kernel's definition");
ABSL_FLAG(std::string, kernel, "", "the CUDA submission");
ABSL_FLAG(std::string, workload, "", "workload uuid (default: the one a profile would choose)");
ABSL_FLAG(int, calls, 1, "calls of the kernel");
ABSL_FLAG(bool, print_metrics, false, "print the profile's ncu metrics and exit");
ABSL_FLAG(std::string, summarize, "", "summarize this ncu raw CSV page and exit");

namespace ptxbench {
namespace {

namespace v1 = ::ptxbench::v1;

absl::Status Summarize(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(std::string csv, ReadFile(path));
  PTXB_ASSIGN_OR_RETURN(worker::NcuSummary summary, worker::SummarizeNcuCsv(csv));
  v1::KernelProfileRun run;
  run.set_status(v1::PASSED);
  run.set_tool("ncu, directly");
  worker::MoveInto(std::move(summary), run);
  std::printf("%s", RenderProfile(run, 8).c_str());
  return absl::OkStatus();
}

absl::Status Call() {
  PTXB_ASSIGN_OR_RETURN(auto registry, workloads::DefinitionRegistry::Load({}));
  PTXB_ASSIGN_OR_RETURN(const workloads::Definition* d,
                        registry->Find(absl::GetFlag(FLAGS_definition)));
  PTXB_ASSIGN_OR_RETURN(const workloads::Workload* w,
                        worker::ChooseProfileWorkload(*d, {}, absl::GetFlag(FLAGS_workload)));
  PTXB_ASSIGN_OR_RETURN(gpu::GpuInventory inventory, gpu::DiscoverGpus());
  if (inventory.gpus.empty()) return absl::FailedPreconditionError("no CUDA GPU");

  worker::CompilerOptions options;
  options.abi_include_dir = DataDir() + "/worker/kernel_abi";
  options.cache_dir = (std::filesystem::temp_directory_path() / "ptxb_direct_call_cache").string();
  worker::Compiler compiler(options);
  worker::CompileRequest request;
  PTXB_ASSIGN_OR_RETURN(request.source, ReadFile(absl::GetFlag(FLAGS_kernel)));
  request.language = "cuda";
  request.definition = d;
  request.target = CompileTarget(inventory.gpus[0].sm_arch);
  PTXB_ASSIGN_OR_RETURN(worker::CompileResult built, compiler.Compile(request));
  if (built.artifact_path.empty()) return absl::InvalidArgumentError(built.log);

  PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaSetDevice(0), "cudaSetDevice"));
  cudaStream_t stream;
  PTXB_RETURN_IF_ERROR(
      gpu::CudaStatus(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream"));
  const runner::WorkloadSpec spec{w->uuid, *d->AxisValues(*w), {}};
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<runner::Reference> ref,
                        runner::MakeReference(*d, spec.axes));
  PTXB_ASSIGN_OR_RETURN(runner::WorkloadBuffers buffers,
                        runner::WorkloadBuffers::Allocate(*d, spec.axes, false));
  PTXB_RETURN_IF_ERROR(buffers.Prepare(*ref, /*seed=*/1, false, stream));
  PTXB_RETURN_IF_ERROR(buffers.Stage(0, stream));
  PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaStreamSynchronize(stream), "preparing the inputs"));

  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<runner::Candidate> candidate,
                        runner::LoadCudaCandidate(built.artifact_path));
  PTXB_RETURN_IF_ERROR(candidate->SetWorkload(runner::WorkloadRequest(*d, spec, {})));
  std::vector<const ptxb::Tensor*> views;
  for (const runner::TensorBuffer& t : buffers.inputs(0)) views.push_back(&t.view);
  for (const runner::TensorBuffer& t : buffers.outputs(0)) views.push_back(&t.view);
  for (int i = 0; i < absl::GetFlag(FLAGS_calls); ++i) {
    PTXB_RETURN_IF_ERROR(candidate->Call(views.data(), static_cast<int>(views.size()), stream));
  }
  PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaStreamSynchronize(stream), "the calls"));
  std::printf("%s: %d call(s) of %s on workload %s\n", d->name.c_str(), absl::GetFlag(FLAGS_calls),
              absl::GetFlag(FLAGS_kernel).c_str(), w->uuid.c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace ptxbench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_print_metrics)) {
    std::printf("%s\n", absl::StrJoin(ptxbench::worker::NcuMetrics(), ",").c_str());
    return 0;
  }
  const absl::Status s = absl::GetFlag(FLAGS_summarize).empty()
                             ? ptxbench::Call()
                             : ptxbench::Summarize(absl::GetFlag(FLAGS_summarize));
  if (!s.ok()) {
    std::fprintf(stderr, "direct_call: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
