#include "worker/gpu_eval.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/log.h"
#include "sandbox/limiter.h"
#include "worker/eval_summary.h"
#include "worker/held_out.h"
#include "worker/harness_process.h"
#include "worker/runner/wire/job.h"
#include "worker/worker_metrics.h"
#include "workloads/launch_spec.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;
namespace fs = std::filesystem;

bool Failed(v1::EvalStatus s) { return s != v1::PASSED; }

// The inputs `w` fixes, as the runner takes them (job.h FixedInput).
std::vector<runner::FixedInput> FixedInputs(const workloads::Workload& w) {
  std::vector<runner::FixedInput> fixed;
  for (const auto& [name, source] : w.inputs) {
    if (source.type == "scalar") {
      fixed.push_back({name, workloads::ScalarJson(source), "", ""});
    } else if (source.type == "safetensors") {
      fixed.push_back({name, "", source.resolved_path, source.tensor_key});
    }
  }
  return fixed;
}

// The workloads to run: the requested uuids (all when none), with every
// axis value, the held-out ones last (held_out.h); an error names an unknown
// uuid.
absl::StatusOr<std::vector<runner::WorkloadSpec>> Workloads(const workloads::Definition& d,
                                                            const v1::EvalRequest& request) {
  if (absl::Status s = workloads::CheckUsable(d); !s.ok()) return s;
  const std::set<std::string> wanted(request.workload_uuids().begin(),
                                     request.workload_uuids().end());
  std::set<std::string> missing = wanted;
  std::vector<runner::WorkloadSpec> specs;
  for (const workloads::Workload& w : d.workloads) {
    if (!wanted.empty() && !wanted.contains(w.uuid)) continue;
    missing.erase(w.uuid);
    absl::StatusOr<std::map<std::string, int64_t>> axes = d.AxisValues(w);
    if (!axes.ok()) return axes.status();
    specs.push_back({w.uuid, *std::move(axes), FixedInputs(w)});
  }
  if (!missing.empty()) {
    return absl::NotFoundError(absl::StrCat("definition ", d.name, " has no workload ",
                                            absl::StrJoin(missing, ", ")));
  }
  if (specs.empty()) return absl::NotFoundError(absl::StrCat("definition ", d.name, " has no workloads"));
  return ShownFirst(request, std::move(specs), [](const runner::WorkloadSpec& w) { return w.uuid; });
}

}  // namespace

std::string FindRunner() {
  if (const char* env = std::getenv("PTXBENCH_RUNNER"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  // Installed side by side, or this build tree (build/<dir>/<binary>).
  for (const fs::path& candidate :
       {self.parent_path() / "ptxbench-runner",
        self.parent_path().parent_path() / "worker" / "runner" / "ptxbench-runner",
        self.parent_path().parent_path().parent_path() / "worker" / "runner" / "ptxbench-runner"}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

sandbox::Protections ConfigureSandbox(const SandboxSettings& settings, CompilerOptions* compiler,
                                      GpuEvalOptions* gpu) {
  sandbox::Protections p = sandbox::ProbeProtections(settings.cgroup_root, settings.uid);
  compiler->sandbox.enabled = p.sandbox_works;
  compiler->sandbox.uid = settings.uid;
  compiler->sandbox.gid = settings.uid;
  compiler->sandbox.memory_bytes = settings.memory_bytes;
  compiler->sandbox.max_processes = settings.max_processes;
  compiler->sandbox.cgroup_parent = p.cgroup_root;
  gpu->sandbox = static_cast<const SandboxLimits&>(settings);
  gpu->cgroup_root = p.cgroup_root;
  if (p.sandbox_works && geteuid() == 0) {
    p.active.push_back(
        absl::StrCat("candidate hosts run as uids ", settings.candidate_uid_first, "..",
                     settings.candidate_uid_first +
                         static_cast<uint32_t>(std::max(1, settings.candidate_uid_count)) - 1,
                     ", one per evaluation in flight; each writes only to its own ",
                     settings.disk_bytes >> 20, " MiB disk"));
  }
  return p;
}

namespace {

// Whether `uid` may read `path` (and enter it, or run it where its owner
// may): by ownership or by the "other" bits; ptxbench's files are not meant
// to be shared through a group.
bool SandboxMay(const struct stat& st, uid_t uid) {
  if (st.st_uid == uid) return true;
  const bool enter = S_ISDIR(st.st_mode) || (st.st_mode & S_IXUSR) != 0;
  return (st.st_mode & S_IROTH) != 0 && (!enter || (st.st_mode & S_IXOTH) != 0);
}

}  // namespace

absl::Status CheckSandboxCanRead(const CompilerOptions& compiler, const std::string& runner,
                                 uid_t sandbox_uid) {
  // Without root the sandbox runs as the worker's own uid (a user namespace).
  if (geteuid() != 0 || sandbox_uid == 0) return absl::OkStatus();
  std::vector<std::pair<fs::path, bool>> roots = {{compiler.abi_include_dir, true}};
  if (!runner.empty()) {
    const runner::TorchHostSpec torch = TorchHostBeside(runner, "");
    roots.insert(roots.end(), {{fs::path(runner).parent_path(), false},
                               {FindCandidateHost(runner), false},
                               {torch.script, false},
                               {fs::path(torch.script).parent_path() / "triton_host.py", false},
                               {torch.library, false}});
  }
  for (const auto& [root, recurse] : roots) {
    std::vector<fs::path> paths = {root};
    std::error_code ec;
    if (recurse) {
      for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        paths.push_back(it->path());
      }
    }
    for (const fs::path& path : paths) {
      struct stat st {};
      if (path.empty() || stat(path.c_str(), &st) != 0) continue;  // absent: found missing later
      if (SandboxMay(st, sandbox_uid)) continue;
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s is not readable by the sandbox uid %u (mode %04o): this installation was made "
          "under a private umask; make it readable with chmod -R a+rX %s",
          path.string(), sandbox_uid, st.st_mode & 07777, root.string()));
    }
  }
  return absl::OkStatus();
}

std::string FindCandidateHost(const std::string& runner) {
  if (runner.empty()) return "";
  const fs::path host = fs::path(runner).parent_path() / "ptxbench-candidate-host";
  return access(host.c_str(), X_OK) == 0 ? host.string() : "";
}

runner::TorchHostSpec TorchHostBeside(const std::string& runner, const std::string& python) {
  const fs::path dir = fs::path(runner).parent_path();
  return {python, (dir / "torch_host.py").string(), (dir / "libptxbench-host.so").string()};
}

namespace {

// A cgroup for one evaluation under the worker's cgroup root, with the
// memory and pids controllers for the candidate host's own cgroup inside
// it; removed (everything in it killed) when the evaluation is over.
class EvaluationCgroup {
 public:
  explicit EvaluationCgroup(const std::string& root) {
    if (root.empty()) return;
    static std::atomic<int> counter{0};
    const std::string dir = absl::StrCat(root, "/eval-", getpid(), "-", counter++);
    if (sandbox::MakeCgroupDir(dir, false) != 0) return;
    (void)WriteFile(dir + "/cgroup.subtree_control", "+memory +pids");
    dir_ = dir;
  }
  ~EvaluationCgroup() {
    if (dir_.empty()) return;
    std::error_code ec;
    for (int attempt = 0; attempt < 100; ++attempt) {
      bool busy = false;
      for (const auto& child : fs::directory_iterator(dir_, ec)) {
        if (!child.is_directory()) continue;
        (void)WriteFile((child.path() / "cgroup.kill").string(), "1");
        if (rmdir(child.path().c_str()) != 0) busy = true;
      }
      if (!busy && rmdir(dir_.c_str()) == 0) return;
      usleep(20000);
    }
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

uint64_t RandomSeed() {
  std::random_device random;
  return (uint64_t{random()} << 32) ^ random() ^ 1;  // never 0
}

}  // namespace

GpuEvaluator::GpuEvaluator(Compiler* compiler, const workloads::DefinitionRegistry* definitions,
                           GpuEvalOptions options, std::string worker_id,
                           std::string toolkit_version)
    : compiler_(compiler),
      definitions_(definitions),
      options_(std::move(options)),
      worker_id_(std::move(worker_id)),
      toolkit_version_(std::move(toolkit_version)),
      candidate_uids_(std::make_unique<sandbox::UidRange>(options_.sandbox.candidate_uid_first,
                                                          options_.sandbox.candidate_uid_count)),
      reference_times_(options_.reference_reuse) {}

CompiledKernel GpuEvaluator::Compile(const v1::EvalRequest& request) {
  return CompileForEvaluation(*compiler_, *definitions_, request, worker_id_, toolkit_version_);
}

v1::EvalResult GpuEvaluator::Evaluate(const v1::EvalRequest& request, const gpu::GpuInfo& gpu,
                                      bool* suspect) {
  return Run(request, Compile(request), gpu, suspect);
}

absl::StatusOr<runner::RunnerJob> GpuEvaluator::MakeJob(const v1::EvalRequest& request,
                                                       const CompiledKernel& compiled,
                                                       const gpu::GpuInfo& gpu,
                                                       uint32_t candidate_uid) const {
  runner::RunnerJob job;
  // A Triton candidate has none: its source travels in the job.
  if (!compiled.artifact.empty()) job.artifact = fs::absolute(compiled.artifact).string();
  job.definition_json = compiled.definition->json;
  job.language = request.language() == "ptx" || request.language() == "triton"
                     ? request.language()
                     : "cuda";
  if (job.language == "triton") {
    job.source = request.kernel_source();
    if (options_.triton_python.empty()) {
      return absl::FailedPreconditionError(
          "a Triton kernel runs on the worker's Python with torch and Triton (--torch-python, "
          "--triton), and this worker offers none");
    }
  }
  if (job.language == "ptx") {
    job.launch_spec = workloads::FindLaunchSpecJson(request.kernel_source()).value_or("");
  }
  job.seed = options_.seed != 0 ? options_.seed : RandomSeed();
  job.seed_fixed = options_.seed != 0;
  job.trials = options_.trials;
  job.warmup_calls = options_.warmup_calls;
  job.timed_calls = options_.timed_calls;
  job.isolation.candidate_host = options_.candidate_host_path.empty()
                                     ? FindCandidateHost(options_.runner_path)
                                     : options_.candidate_host_path;
  if (job.isolation.candidate_host.empty()) {
    return absl::FailedPreconditionError("ptxbench-candidate-host not found next to the runner");
  }
  job.reference = options_.reference;
  job.census = job.language == "triton" || options_.census_builds;
  job.torch = TorchHostBeside(options_.runner_path, job.language == "triton"
                                                        ? options_.triton_python
                                                        : options_.torch_python);
  job.isolation.uid = options_.sandbox.uid;
  job.isolation.gid = options_.sandbox.uid;
  job.isolation.candidate_uid = candidate_uid;
  job.isolation.candidate_gid = candidate_uid;
  job.isolation.memory_bytes = options_.sandbox.memory_bytes;
  job.isolation.max_processes = options_.sandbox.max_processes;
  job.isolation.disk_bytes = options_.sandbox.disk_bytes;
  job.isolation.cpus = options_.sandbox.cpus;
  job.isolation.cpu_seconds = static_cast<uint64_t>(std::max(1.0, options_.sandbox.cpus) *
                                                    absl::ToDoubleSeconds(options_.deadline));
  job.isolation.device_minor = gpu.device_minor;
  job.isolation.call_deadline_s =
      std::max<int>(1, static_cast<int>(absl::ToInt64Seconds(options_.call_deadline)));
  return job;
}

absl::StatusOr<HarnessProcessOutcome> GpuEvaluator::RunJob(runner::RunnerJob job,
                                                           const gpu::GpuInfo& gpu,
                                                           absl::Duration deadline,
                                                           std::vector<std::string> collect) const {
  EvaluationCgroup cgroup(options_.cgroup_root);
  job.isolation.cgroup_parent = cgroup.dir();
  HarnessProcessOptions harness;
  harness.argv = {options_.runner_path, "--job", "{dir}/job.json", "--out", "{dir}/results.jsonl"};
  harness.files = {{"job.json", runner::SerializeJob(job)}};
  harness.collect = std::move(collect);
  harness.deadline = deadline;
  harness.gpu_index = gpu.index;
  harness.temp_root = options_.temp_root;
  return RunHarnessProcess(harness);
}

void GpuEvalOptions::UseProfiler(const NcuInstall& install) {
  ncu = install.executable;
  ncu_root = install.root;
  profiler = absl::StrCat("Nsight Compute ", install.version);
}

void GpuEvalOptions::UseSanitizer(const SanitizerInstall& install) {
  sanitizer = install.executable;
  sanitizer_root = install.root;
  sanitizer_name = absl::StrCat("compute-sanitizer ", install.version);
}

v1::EvalResult GpuEvaluator::Run(const v1::EvalRequest& request, CompiledKernel compiled,
                                 const gpu::GpuInfo& gpu, bool* suspect) {
  *suspect = false;
  v1::EvalResult& result = compiled.result;
  result.set_gpu_model(gpu.name);
  auto finish = [&]() {
    result.set_wall_time_ms(absl::ToInt64Milliseconds(absl::Now() - compiled.start));
    return result;
  };
  auto infra = [&](std::string error) {
    result.set_status(v1::INFRA_ERROR);
    result.set_all_passed(false);
    result.set_error(std::move(error));
    return finish();
  };
  if (!compiled.built()) return finish();
  if (options_.runner_path.empty()) return infra("ptxbench-runner not found (set PTXBENCH_RUNNER)");
  absl::StatusOr<std::vector<runner::WorkloadSpec>> workloads =
      Workloads(*compiled.definition, request);
  if (!workloads.ok()) return infra(std::string(workloads.status().message()));

  // PTXBench's gate: memory errors stop the turn before anything is timed.
  if (request.memcheck() && MemcheckGate(request, compiled, gpu, *workloads, result, suspect)) {
    if (result.status() != v1::INFRA_ERROR) {
      SummarizeTraces(result);
      DebugReport(request, compiled, gpu, *workloads, result, suspect);
    }
    return finish();
  }
  const bool gate_suspect = *suspect;
  // The candidate's own uid for as long as its evaluation runs.
  const sandbox::UidRange::Lease candidate_uid = candidate_uids_->Acquire();
  absl::StatusOr<runner::RunnerJob> made = MakeJob(request, compiled, gpu, candidate_uid.uid());
  if (!made.ok()) return infra(std::string(made.status().message()));
  runner::RunnerJob& job = *made;
  job.workloads = *workloads;
  job.known_references = reference_times_.Lookup(gpu, job);
  const absl::Time runner_start = absl::Now();
  absl::StatusOr<HarnessProcessOutcome> outcome =
      RunJob(job, gpu, options_.deadline, {"results.jsonl"});
  if (options_.metrics != nullptr) options_.metrics->GpuTimedWork(gpu.index, absl::Now() - runner_start);
  if (!outcome.ok()) return infra(absl::StrCat("starting the runner: ", outcome.status().message()));

  runner::RunnerOutput out = runner::ParseRunnerOutput(outcome->collected["results.jsonl"]);
  if (const std::string drift = reference_times_.Store(gpu, job, out.references); !drift.empty()) {
    LogWarning("reference figures of this GPU dropped: it drifted",
               {{"gpu", absl::StrCat(gpu.index)}, {"drift", drift}});
  }
  std::map<std::string, v1::WorkloadTrace> by_uuid;
  for (v1::WorkloadTrace& t : out.traces) by_uuid[t.workload_uuid()] = std::move(t);
  // A runner that crashed or hung leaves the workload it was on with the way
  // it died; one that stopped because the candidate broke the CUDA context
  // wrote that workload's trace itself. Workloads after either were not run.
  const process::RunResult& p = outcome->process;
  // (A candidate that calls exit(3) itself leaves its workload unfinished.)
  const bool context_lost =
      p.exited && p.exit_code == runner::kRunnerContextLost && out.unfinished.empty();
  const bool candidate_failed = p.exited && p.exit_code == runner::kRunnerCandidateFailed;
  const bool crashed =
      outcome->status != v1::EVAL_STATUS_UNSPECIFIED && !context_lost && !candidate_failed;
  if (crashed && options_.metrics != nullptr) options_.metrics->RunnerCrashed();
  std::string stopped_at;
  for (const runner::WorkloadSpec& w : job.workloads) {
    v1::WorkloadTrace* trace = result.add_traces();
    if (auto it = by_uuid.find(w.uuid); it != by_uuid.end()) {
      *trace = it->second;
      if (context_lost && stopped_at.empty() && Failed(trace->status())) stopped_at = w.uuid;
      continue;
    }
    trace->set_workload_uuid(w.uuid);
    for (const auto& [k, v] : w.axes) (*trace->mutable_axes())[k] = v;
    if (crashed && stopped_at.empty() && (out.unfinished.empty() || out.unfinished == w.uuid)) {
      trace->set_status(outcome->status);
      trace->add_errors(outcome->diagnostic);
      stopped_at = w.uuid;
    } else if (!stopped_at.empty()) {
      trace->set_status(v1::RUNTIME_ERROR);
      trace->add_errors(absl::StrCat("not run: the evaluation stopped at workload ", stopped_at));
    } else if (p.exited && p.exit_code == runner::kRunnerResultsLost) {
      trace->set_status(v1::INFRA_ERROR);
      trace->add_errors(
          absl::StrCat("the runner could not write its results (is the worker's "
                       "temporary directory ",
                       options_.temp_root, " full?)"));
    } else {
      trace->set_status(v1::INFRA_ERROR);
      trace->add_errors(absl::StrCat("the runner wrote no result for this workload (exit code ",
                                     p.exit_code, ")\n", outcome->diagnostic));
    }
  }
  *suspect = gate_suspect || crashed || context_lost || candidate_failed;
  SummarizeTraces(result);
  if (request.memcheck() && result.has_memcheck()) {
    for (v1::WorkloadTrace& t : *result.mutable_traces()) {
      t.set_log(absl::StrFormat("memcheck gate: clean on workload %s (%.1f s, in no figure)\n%s",
                                result.memcheck().workload_uuid(),
                                result.memcheck().wall_time_ms() / 1000.0, t.log()));
    }
    if (result.status() == v1::RUNTIME_ERROR || result.status() == v1::TIMEOUT) {
      DebugReport(request, compiled, gpu, job.workloads, result, suspect);
    }
  }
  // Not after an infrastructure failure: the task is retried elsewhere.
  if (request.profile() && result.status() != v1::INFRA_ERROR) {
    Profile(request, compiled, gpu, job.workloads, result, suspect);
  }
  return finish();
}

absl::Status GpuEvaluator::CheckHealth(int gpu_index) {
  if (options_.runner_path.empty()) return absl::FailedPreconditionError("ptxbench-runner not found");
  HarnessProcessOptions harness;
  harness.argv = {options_.runner_path, "--health"};
  harness.deadline = options_.health_deadline;
  harness.gpu_index = gpu_index;
  harness.temp_root = options_.temp_root;
  absl::StatusOr<HarnessProcessOutcome> outcome = RunHarnessProcess(harness);
  if (!outcome.ok()) return outcome.status();
  if (outcome->status == v1::EVAL_STATUS_UNSPECIFIED) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("GPU ", gpu_index, ": ", outcome->diagnostic));
}

}  // namespace ptxbench::worker
