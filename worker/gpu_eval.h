#ifndef PTXBENCH_WORKER_GPU_EVAL_H_
#define PTXBENCH_WORKER_GPU_EVAL_H_

// Full evaluation on a GPU (docs/MEASUREMENT.md), worker side: build the kernel
// (CPU, any thread), then run `ptxbench-runner` for it in a sandbox pinned to
// one GPU (worker/runner/harness/runner.h says what the runner does) and turn what it
// wrote — or how it died — into an EvalResult. The candidate's code never runs
// in this process.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ptxbench/v1/common.pb.h"
#include "sandbox/policy.h"
#include "sandbox/protections.h"
#include "sandbox/uid_range.h"
#include "worker/compile/compiler.h"
#include "worker/compile_only.h"
#include "worker/gpu/device_info.h"
#include "worker/harness_process.h"
#include "worker/profile/ncu_install.h"
#include "worker/profile/sanitizer_install.h"
#include "worker/reference_times.h"
#include "worker/runner/measure/sanitizer_log.h"
#include "worker/runner/wire/job.h"
#include "workloads/registry.h"

namespace ptxbench::worker {

class WorkerMetrics;

// The sandboxes of a worker (docs/SECURITY.md), when it is root: the uid that
// compiles and that the harness drops to; the range of uids the candidate
// hosts run as, one per evaluation in flight (sandbox::UidRange: evaluations
// wait for a free one); the limits of each compile and candidate host
// (memory, processes) and the candidate host's own (its disk, CPU share).
struct SandboxLimits {
  uint32_t uid = sandbox::kDefaultUid;
  // Candidate hosts: uids first .. first + count - 1 (a worker runs at most
  // one evaluation per GPU at a time: 16 covers a node of 8 GPUs twice over).
  uint32_t candidate_uid_first = 65000;
  int candidate_uid_count = 16;
  uint64_t memory_bytes = sandbox::kDefaultMemoryBytes;
  int max_processes = sandbox::kDefaultMaxProcesses;
  uint64_t disk_bytes = uint64_t{512} << 20;
  double cpus = 2;
};

struct GpuEvalOptions {
  std::string runner_path;  // the ptxbench-runner binary
  // The sandboxed host of the candidate (next to the runner by default).
  std::string candidate_host_path;
  // The sandboxes' uids and the candidate host's limits (its CPU time is
  // its CPU share times `deadline`); and the cgroup v2 directory
  // per-evaluation cgroups are made in (empty: the watchdog).
  SandboxLimits sandbox;
  std::string cgroup_root;
  // One call of the candidate (warm-up, checked or timed) past this: TIMEOUT.
  absl::Duration call_deadline = absl::Seconds(60);
  // For one runner process (every workload of one evaluation). Past it the
  // process group is killed and the workload in progress is a TIMEOUT.
  absl::Duration deadline = absl::Minutes(10);
  absl::Duration health_deadline = absl::Minutes(1);
  // Root of the input seeds; 0: drawn at random for every evaluation, so no
  // submission can know its inputs ahead of a call (a seed derived from the
  // kernel would let a kernel that knows its own source compute them). A
  // drawn seed is in every trace's log afterwards; a set one reproduces
  // evaluations and is never shown (every later evaluation uses it).
  uint64_t seed = 0;
  int trials = 0;  // 0: the definition's
  int warmup_calls = 10;
  int timed_calls = 50;
  std::string temp_root = "/tmp";
  // A Python interpreter with torch and CUDA for definitions whose reference
  // is PyTorch code only (worker/runner/hosts/torch_host.py); empty: none, and such
  // definitions are an INFRA_ERROR here.
  std::string torch_python;
  std::string triton_python;  // a Python with torch and Triton; empty: none
  // The census of what timed calls ran (docs/SECURITY.md, "What ran") for
  // CUDA and PTX candidates too; a Triton candidate's always has one.
  bool census_builds = true;
  // Profiles on request (docs/MEASUREMENT.md, "Profiles"): Nsight Compute
  // (FindNcu in worker/profile/ncu_install.h); empty `ncu`: this worker
  // cannot profile. A profile run ends at `profile_deadline`.
  std::string ncu;
  std::string ncu_root;
  std::string profiler;  // e.g. "Nsight Compute 2025.3.1.0"
  absl::Duration profile_deadline = absl::Minutes(3);
  // Profiles with `install` (FindNcu's answer): sets the three above.
  void UseProfiler(const NcuInstall& install);
  // The memcheck gate and debug reports on request (docs/MEASUREMENT.md,
  // "The memcheck gate"): compute-sanitizer (FindSanitizer in
  // worker/profile/sanitizer_install.h); empty `sanitizer`: this worker
  // has none. One call under memcheck past `sanitize_call_deadline` is a
  // TIMEOUT (PTXBench's 120 s); a sanitize run ends at `sanitize_deadline`.
  std::string sanitizer;
  std::string sanitizer_root;
  std::string sanitizer_name;  // e.g. "compute-sanitizer 2025.3.0.0"
  absl::Duration sanitize_call_deadline = absl::Seconds(120);
  absl::Duration sanitize_deadline = absl::Minutes(6);
  // The gate with `install` (FindSanitizer's answer): sets the three above.
  void UseSanitizer(const SanitizerInstall& install);
  // Tests: force the PyTorch reference where a native one exists.
  runner::ReferenceChoice reference = runner::ReferenceChoice::kAuto;
  // How long a reference figure measured on a GPU is reused by the next
  // evaluations there instead of timed again (reference_times.h); zero:
  // every evaluation times its reference.
  absl::Duration reference_reuse = absl::ZeroDuration();
  // Where each runner's wall time (the GPU's timed work) and crashes are
  // counted; not owned, may be null.
  WorkerMetrics* metrics = nullptr;
};

// The sandbox settings of a worker (or a local `ptxbench eval`): probes what
// the machine allows (sandbox/protections.h) and fills both the compiler's
// and the GPU evaluation's options. Returns the probe, to log and register.
struct SandboxSettings : SandboxLimits {
  // Where the probe looks for cgroup v2 (sandbox/protections.h).
  std::string cgroup_root = "/sys/fs/cgroup/ptxbench";
};
sandbox::Protections ConfigureSandbox(const SandboxSettings& settings, CompilerOptions* compiler,
                                      GpuEvalOptions* gpu);

// The runner next to this executable or in the build tree
// ($PTXBENCH_RUNNER first); empty when none is found.
std::string FindRunner();
// The candidate host next to `runner`; empty when it is not there.
std::string FindCandidateHost(const std::string& runner);
// The PyTorch reference host (torch_host.py and libptxbench-host.so) beside
// `runner`, run by `python` (empty: none).
runner::TorchHostSpec TorchHostBeside(const std::string& runner, const std::string& python);

// What the sandbox uid reads of this installation: the kernel ABI headers,
// and beside `runner` (may be empty) the candidate host, its directory and the
// PyTorch reference host. FailedPrecondition naming the first file it cannot
// read (or directory it cannot enter), when the worker is root and so the
// sandbox runs as `sandbox_uid`: a checkout or build made under a private
// umask (077) is its owner's alone, and every build or run would fail.
absl::Status CheckSandboxCanRead(const CompilerOptions& compiler, const std::string& runner,
                                 uid_t sandbox_uid);

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
  // The runner's job for `compiled` on `gpu` (no workloads yet).
  absl::StatusOr<runner::RunnerJob> MakeJob(const ptxbench::v1::EvalRequest& request,
                                            const CompiledKernel& compiled,
                                            const gpu::GpuInfo& gpu, uint32_t candidate_uid) const;
  // Runs the runner for `job` on `gpu` in a cgroup of its own, collecting
  // `collect` from its directory.
  absl::StatusOr<HarnessProcessOutcome> RunJob(runner::RunnerJob job, const gpu::GpuInfo& gpu,
                                               absl::Duration deadline,
                                               std::vector<std::string> collect) const;
  // After the evaluation, on the same GPU (still held: a profiler's
  // counters see the whole device): `result.profile` (gpu_profile.cc).
  // `evaluated`: the workloads the evaluation ran.
  void Profile(const ptxbench::v1::EvalRequest& request, const CompiledKernel& compiled,
               const gpu::GpuInfo& gpu, const std::vector<runner::WorkloadSpec>& evaluated,
               ptxbench::v1::EvalResult& result, bool* suspect);

  // A sanitize run (gpu_sanitize.cc) of `workload`: PASSED (a finished
  // report, clean, or a crash left to the evaluation), RUNTIME_ERROR (the
  // report's errors), TIMEOUT, or INFRA_ERROR (`why`).
  struct SanitizeOutcome {
    ptxbench::v1::EvalStatus status = ptxbench::v1::INFRA_ERROR;
    runner::SanitizerFindings findings;
    std::string why;
    absl::Duration wall;
  };
  SanitizeOutcome Sanitize(const ptxbench::v1::EvalRequest& request, const CompiledKernel& compiled,
                           const gpu::GpuInfo& gpu, const runner::WorkloadSpec& workload,
                           bool debug, bool* suspect);
  // Before the evaluation, when the request asks for it: the gate on the
  // first of `evaluated`, its figures in `result.memcheck`. True when it
  // stopped the evaluation (`result` then says why, untimed).
  bool MemcheckGate(const ptxbench::v1::EvalRequest& request, const CompiledKernel& compiled,
                    const gpu::GpuInfo& gpu, const std::vector<runner::WorkloadSpec>& evaluated,
                    ptxbench::v1::EvalResult& result, bool* suspect);
  // After a RUNTIME_ERROR or TIMEOUT (the gate's or the evaluation's): a
  // debug run on the first such workload, whose report replaces its log.
  void DebugReport(const ptxbench::v1::EvalRequest& request, const CompiledKernel& compiled,
                   const gpu::GpuInfo& gpu, const std::vector<runner::WorkloadSpec>& evaluated,
                   ptxbench::v1::EvalResult& result, bool* suspect);

  Compiler* compiler_;
  const workloads::DefinitionRegistry* definitions_;
  const GpuEvalOptions options_;
  const std::string worker_id_;
  const std::string toolkit_version_;
  std::unique_ptr<sandbox::UidRange> candidate_uids_;
  ReferenceTimes reference_times_;
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_GPU_EVAL_H_
