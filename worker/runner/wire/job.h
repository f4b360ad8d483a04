#ifndef PTXBENCH_WORKER_RUNNER_WIRE_JOB_H_
#define PTXBENCH_WORKER_RUNNER_WIRE_JOB_H_

// What the worker hands a runner process, and what the runner hands back.
//
// The worker writes job.json into the runner's private directory; the runner
// appends one line per event to results.jsonl, flushed as it goes, so a
// runner that dies half-way still leaves the results it finished and names
// the workload it was on:
//   {"started": "<workload uuid>"}
//   {"reference": <KnownReference>}   (the reference timed in this run)
//   {"trace": <WorkloadTrace as proto JSON>}
// Plain C++ (no CUDA): the worker side uses it without a GPU.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"
#include "sandbox/policy.h"
#include "workloads/definition.h"

namespace ptxbench::runner {

// Exit codes of ptxbench-runner.
inline constexpr int kRunnerOk = 0;           // every workload has a trace line
inline constexpr int kRunnerBadJob = 2;       // the job could not be read
inline constexpr int kRunnerContextLost = 3;  // a CUDA error ended the run early
// Every workload has a trace line, but the candidate host crashed, hung or
// broke its CUDA context: the GPU should be checked before its next task.
inline constexpr int kRunnerCandidateFailed = 4;
// A result line could not be written (the worker's disk, never the
// candidate's: that is a filesystem of its own).
inline constexpr int kRunnerResultsLost = 5;

// An input a workload fixes instead of leaving it to the seed: a dataset's
// "scalar" or "safetensors" source. Every call gets exactly this value.
struct FixedInput {
  std::string name;
  std::string scalar_json;       // scalar: the value as JSON ("1e-06", "3", "true")
  std::string path, tensor_key;  // safetensors: the file (absolute) and the tensor
};

struct WorkloadSpec {
  std::string uuid;
  std::map<std::string, int64_t> axes;  // every axis, const ones included
  std::vector<FixedInput> fixed;        // the rest are drawn from the seed
};

// The reference a candidate is checked and timed against.
enum class ReferenceChoice {
  kAuto,     // the native library where one computes the definition, else PyTorch
  kNative,   // cuBLAS / cuDNN only
  kPyTorch,  // the definition's PyTorch reference (tests compare the two)
};

// The PyTorch reference host (worker/runner/hosts/torch_host.py). A Triton
// candidate runs on the same interpreter, through triton_host.py beside
// `script` (that Python must then import triton too).
struct TorchHostSpec {
  std::string python;   // an interpreter with torch and CUDA; empty: none
  std::string script;   // torch_host.py
  std::string library;  // libptxbench-host.so
};

// How the candidate host is isolated (worker/runner/hosts/isolation.h).
struct IsolationSpec {
  std::string candidate_host;  // the ptxbench-candidate-host binary
  // When the runner starts as root: the uid/gid the harness (and a reference
  // host) drops to, and the candidate host's own, which no other process of
  // the node has while it runs (the worker gives each evaluation slot its
  // own, sandbox/uid_range.h).
  uint32_t uid = sandbox::kDefaultUid;
  uint32_t gid = sandbox::kDefaultUid;
  uint32_t candidate_uid = sandbox::kDefaultUid;
  uint32_t candidate_gid = sandbox::kDefaultUid;
  uint64_t memory_bytes = sandbox::kDefaultMemoryBytes;
  int max_processes = sandbox::kDefaultMaxProcesses;
  // All the candidate host may write: its directory is a filesystem of this
  // size of its own (nothing it writes reaches the node's disks).
  uint64_t disk_bytes = uint64_t{512} << 20;
  // Its CPU: a share (cgroup cpu.max, where the worker has the controller;
  // 0: none) and a total (RLIMIT_CPU, seconds; 0: none).
  double cpus = 2;
  uint64_t cpu_seconds = 0;
  std::string cgroup_parent;  // empty: the watchdog
  // The /dev/nvidia<minor> node of the GPU; -1: unknown (every GPU node is
  // bound, and CUDA_VISIBLE_DEVICES alone pins the GPU).
  int device_minor = -1;
  // One call of the candidate (warm-up, checked or timed) past this is a
  // TIMEOUT.
  int call_deadline_s = 60;
};

// A profile run (docs/MEASUREMENT.md, "Profiles") instead of an evaluation:
// the candidate host runs under Nsight Compute in its sandbox, the job's one
// workload gets one checked call (no calibration, no timing), and the
// profiler's report and its raw CSV page are copied out next to the results
// (kProfileReport, kProfileCsv).
struct ProfileSpec {
  std::string ncu;       // the ncu executable; empty: no profile
  // Nsight Compute's installation, bound read-only into the candidate's
  // view whole, its profiling libraries unmasked (they compute nothing).
  std::string ncu_root;
  int launch_count = 32;  // kernel launches profiled at most
  std::string metrics;    // comma-separated (worker/profile/ncu_summary.h)
};
inline constexpr char kProfileReport[] = "profile.ncu-rep";
inline constexpr char kProfileCsv[] = "profile.csv";
// Each copied out only up to this size (a larger one is not copied at all).
// Measured on an H100: 55 KiB for one profiled launch of the test GEMM, 280
// KiB for the three of an attention backward pass, about 90 KiB a launch;
// 32 launches (ProfileSpec) stay under 3 MiB. Every report is stored, so
// this bounds what a hostile kernel adds to the scheduler's disk per
// evaluation.
inline constexpr int64_t kMaxProfileFileBytes = int64_t{8} << 20;

// A sanitize run (docs/MEASUREMENT.md, "The memcheck gate") instead of an
// evaluation: the candidate host runs under compute-sanitizer's memcheck in
// its sandbox, the job's one workload gets `trials` checked calls (no
// calibration, no timing), and the sanitizer's log, written to a file of its
// own (never the candidate's stdout), is copied out next to the results
// (kSanitizerLog) for the worker to judge (sanitizer_log.h).
struct SanitizeSpec {
  std::string sanitizer;  // the compute-sanitizer executable; empty: no sanitize run
  // compute-sanitizer's installation, bound read-only into the candidate's
  // view whole, its injection libraries unmasked (they compute nothing).
  std::string sanitizer_root;
  int print_limit = 1;  // errors reported at most (--print-limit)
  // The debug report's run: device backtraces too, so that the report names
  // the source lines the worker shows around each fault.
  bool debug = false;
};
inline constexpr char kSanitizerLog[] = "memcheck.log";
// Copied out only up to this size (a larger one is not copied at all, and
// then reads as no report): 100 errors with their device backtraces, the
// debug run's print limit, are well under it.
inline constexpr int64_t kMaxSanitizerLogBytes = int64_t{1} << 20;

// The reference's figure for one workload, timed by an earlier run on the
// same GPU (the worker's ReferenceTimes): a run given one does not time the
// reference on that workload again. `log` holds that run's calibration and
// trial lines, prefixed by the worker with where and when they were measured.
struct KnownReference {
  std::string workload_uuid;
  std::string name;  // "cuBLAS", "PyTorch", ...: used only if the run's own matches
  double ms = 0;
  std::string log;
};

struct RunnerJob {
  std::string artifact;         // the candidate's kernel.so (cuda) or kernel.cubin (ptx)
  std::string language = "cuda";  // "cuda" | "ptx" | "triton"
  // triton: kernel.py's text (its own Python module, compiled by Triton's
  // JIT in the candidate's sandbox: worker/runner/hosts/triton_host.py).
  std::string source;
  std::string launch_spec;        // ptx: the launch spec JSON (launch_spec.h)
  std::string definition_json;  // the definition file's text
  std::vector<WorkloadSpec> workloads;
  // Root of every input seed (recorded in each trace's log once the
  // evaluation is over): inputs are a function of (seed, workload, trial,
  // call). The worker draws it at random unless told otherwise, and the
  // candidate never learns it, so no submission can compute its inputs
  // ahead of a call.
  uint64_t seed = 0;
  // The worker's own fixed seed (--seed), the same for every evaluation:
  // then the log never shows it, since an evaluation that saw it in an
  // earlier one's feedback could compute all its inputs ahead.
  bool seed_fixed = false;
  int trials = 0;  // 0: the definition's own count
  int warmup_calls = 10;
  int timed_calls = 50;
  IsolationSpec isolation;
  ReferenceChoice reference = ReferenceChoice::kAuto;
  TorchHostSpec torch;
  // Benchmarks only (bench/gpu/reference_timing_bench): time the reference
  // and write its figures; no candidate (`artifact` is unused).
  bool reference_only = false;
  // With reference_only, for tests: time the PyTorch reference and check its
  // outputs against the native one's on `trials` fresh inputs per workload
  // (status PASSED when they agree within the definition's tolerance).
  bool compare_references = false;
  // With reference_only: the reference host's call overhead also measured
  // with spin kernels of other shapes (CallTimer::SurveyCalibration), logged
  // before the first workload's reference lines.
  bool calibration_survey = false;
  // The census of what the candidate's timed calls ran (census.h): the
  // tracer in the candidate host, and LIBRARY_FALLBACK from what it saw.
  // Always for Triton; for builds with the worker's --census-builds.
  bool census = false;
  // With reference_only: each timed bracket holds this many calls of the
  // reference, alternating buffer sets, and a sample is the bracket less the
  // call overhead divided by it (how the hand-over's cost spreads over calls;
  // bench/gpu/NOTES.md).
  int calls_per_bracket = 1;
  ProfileSpec profile;
  SanitizeSpec sanitize;
  std::vector<KnownReference> known_references;
};

std::string SerializeJob(const RunnerJob& job);
// kInvalidArgument naming the problem for a malformed job.
absl::StatusOr<RunnerJob> ParseJob(absl::string_view json);

// Whether `job` is measured against `definition`'s PyTorch reference (else
// the native library): its choice, or the definition's own where it leaves
// it open. An error names why the definition has no reference of that kind.
absl::StatusOr<bool> UsesPyTorch(const RunnerJob& job, const workloads::Definition& definition);

// The kinds of result line (with the trailing newline).
std::string StartedLine(absl::string_view uuid);
std::string ReferenceLine(const KnownReference& reference);
std::string TraceLine(const ptxbench::v1::WorkloadTrace& trace);

struct RunnerOutput {
  std::vector<ptxbench::v1::WorkloadTrace> traces;  // finished workloads, in order
  std::vector<KnownReference> references;           // timed in this run
  std::string unfinished;  // uuid started without a trace line after it; "" if none
};
// Lines that do not parse are skipped (a line cut short by a crash).
RunnerOutput ParseRunnerOutput(absl::string_view text);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_WIRE_JOB_H_
