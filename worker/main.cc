// ptxbench-worker: leases evaluation tasks from the scheduler and reports
// results. With GPUs it compiles, checks and times kernels
// (docs/MEASUREMENT.md); without one it offers compile-only evaluation (build,
// resources, PTX census, library check), and says so; with --simulate it
// returns deterministic synthetic results for tests and benchmarks.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "common/cache_dir.h"
#include "common/gpu_arch.h"
#include "common/log.h"
#include "daemon/start.h"
#include "daemon/status_server.h"
#include "executor/command_line.h"
#include "executor/connection_flags.h"
#include "executor/daemon_flags.h"
#include "executor/executor_runner.h"
#include "executor/health.h"
#include "executor/run_until_stopped.h"
#include "sandbox/policy.h"
#include "worker/compile_only.h"
#include "worker/evaluation_stack.h"
#include "worker/gpu/device_info.h"
#include "worker/gpu_worker.h"
#include "worker/profile/ncu_install.h"
#include "worker/profile/sanitizer_install.h"
#include "worker/simulated_worker.h"
#include "worker/stop_guard.h"
#include "worker/torch_probe.h"
#include "worker/worker_metrics.h"

ABSL_FLAG(std::string, cache_dir, "",
          "Build cache folder (default: $XDG_CACHE_HOME or ~/.cache, /ptxbench/builds)");
ABSL_FLAG(double, cache_max_gib, 20,
          "Bound of the build cache: past it the least recently used builds go, none used in "
          "the last 30 minutes (--cache-max-gib; 0: unbounded)");
ABSL_FLAG(std::vector<std::string>, dataset, {},
          "extra FlashInfer-Trace dataset folders (comma-separated)");
ABSL_FLAG(bool, prefer_dataset, false,
          "a dataset definition named like a bundled one replaces it (default: skipped)");
ABSL_FLAG(int, eval_deadline_s, 600,
          "Wall-clock limit of one GPU evaluation, seconds (--eval-deadline-s)");
ABSL_FLAG(int, timed_calls, 50, "Timed calls per trial (--timed-calls)");
ABSL_FLAG(int, warmup_calls, 10, "Warm-up calls per trial (--warmup-calls)");
ABSL_FLAG(int, reference_reuse_s, 600,
          "Seconds a reference figure timed on a GPU is reused by later evaluations of the same "
          "workload there instead of timed again (--reference-reuse-s; 0: every evaluation times "
          "its reference; docs/MEASUREMENT.md)");
ABSL_FLAG(bool, compile_only, false,
          "Offer compile-only evaluation even where GPUs are found (--compile-only)");
ABSL_FLAG(int, gpus, 1, "Simulated GPUs (\"Simulated H200\", sm_90); 0: compile-only");
ABSL_FLAG(std::string, gpu_arch, "sm_90",
          "Architecture of the simulated GPUs, e.g. sm_100 (--gpu-arch)");
ABSL_FLAG(uint32_t, sandbox_uid, ptxbench::sandbox::kDefaultUid,
          "Uid that compiles submitted code and that the harness drops to, when the worker is "
          "root (--sandbox-uid)");
ABSL_FLAG(uint32_t, candidate_uid_base, 65000,
          "First of the 16 uids the candidate hosts run as when the worker is root: no two "
          "evaluations in flight share one (--candidate-uid-base; default 65000..65015)");
ABSL_FLAG(int, sandbox_disk_mib, 512,
          "All a candidate host may write: its own filesystem of this size, MiB "
          "(--sandbox-disk-mib)");
ABSL_FLAG(double, sandbox_cpus, 2,
          "CPU share of each candidate host (cgroup v2 cpu.max; its CPU time is this times "
          "--eval-deadline-s) (--sandbox-cpus)");
ABSL_FLAG(double, sandbox_memory_gib,
          static_cast<double>(ptxbench::sandbox::kDefaultMemoryBytes) / (uint64_t{1} << 30),
          "Memory limit of each compile and each candidate host, GiB (--sandbox-memory-gib)");
ABSL_FLAG(int, sandbox_max_processes, ptxbench::sandbox::kDefaultMaxProcesses,
          "Process limit of each compile and each candidate host (--sandbox-max-processes)");
ABSL_FLAG(std::string, torch_python, "auto",
          "Python with torch and CUDA that runs the PyTorch reference of definitions no native "
          "reference computes, and Triton submissions when it has Triton too: PATH, auto "
          "(python3 on PATH) or none (--torch-python)");
ABSL_FLAG(bool, triton, false,
          "Offer Triton submissions (on the --torch-python Python, which must have Triton). Off "
          "by default until the census of what their timed calls run, which makes a run() that "
          "calls torch or cuBLAS a LIBRARY_FALLBACK, has run on a GPU machine (docs/SECURITY.md, "
          "\"What ran\")");
ABSL_FLAG(bool, census_builds, true,
          "Census what the timed calls of CUDA and PTX candidates run too, as Triton's always "
          "are (docs/SECURITY.md, \"What ran\"); --census-builds=false leaves them without one");
ABSL_FLAG(std::string, ncu, "",
          "Nsight Compute (e.g. /usr/local/cuda/bin/ncu) that profiles kernels of experiments "
          "that ask for profiles (--ncu; default: this worker does not profile; "
          "docs/MEASUREMENT.md, \"Profiles\")");
ABSL_FLAG(std::string, compute_sanitizer, "/usr/local/cuda/bin/compute-sanitizer",
          "compute-sanitizer for the memcheck gate of experiments that ask for it "
          "(--compute-sanitizer; empty: none; docs/MEASUREMENT.md, \"The memcheck gate\")");
ABSL_FLAG(std::string, cgroup_root, "/sys/fs/cgroup/ptxbench",
          "cgroup v2 directory for the sandboxes' cgroups; without cgroup v2 a watchdog "
          "enforces the limits (--cgroup-root)");

namespace {

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptxbench-worker: %s\n", message.c_str());
  return ptxbench::executor::kUsageExitCode;
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "worker";
  return host;
}

std::string DefaultCacheDir() { return ptxbench::UserCacheDir() + "/builds"; }

// The Python of this worker's PyTorch references and Triton submissions,
// probed once, set in `eval_options` and `caps` (torch_reference, triton) and
// logged; a worker without one still evaluates every definition a native
// reference computes, in CUDA and PTX.
void ProbePython(ptxbench::worker::GpuEvalOptions* eval_options,
                 ptxbench::v1::Capabilities* caps) {
  const ptxbench::worker::TorchProbe probe =
      ptxbench::worker::ProbeTorch(absl::GetFlag(FLAGS_torch_python));
  if (probe.ok()) {
    ptxbench::LogInfo("PyTorch references", {{"torch", probe.version}, {"python", probe.python}});
    eval_options->torch_python = probe.python;
  } else if (absl::GetFlag(FLAGS_torch_python) == "none") {
    ptxbench::LogInfo("no PyTorch references (--torch-python none)", {});
  } else {
    ptxbench::LogWarning(
        "no PyTorch references: definitions no native reference computes are not evaluated "
        "here (--torch-python PATH: a Python with torch and CUDA)",
        {{"python", probe.python}, {"why", probe.why_not}});
  }
  caps->set_torch_reference(probe.Capability());
  if (!absl::GetFlag(FLAGS_triton)) {
    ptxbench::LogInfo("no Triton submissions: off until their census has run on a GPU machine "
                      "(--triton offers them)",
                      {});
    return;
  }
  const ptxbench::worker::TritonProbe triton = ptxbench::worker::ProbeTriton(probe);
  if (triton.ok()) {
    ptxbench::LogInfo("Triton submissions",
                      {{"triton", triton.version}, {"python", triton.python}});
    eval_options->triton_python = triton.python;
  } else {
    ptxbench::LogInfo("no Triton submissions: Triton experiments go to other workers "
                      "(--torch-python PATH: a Python with torch, Triton and CUDA)",
                      {{"python", triton.python}, {"why", triton.why_not}});
  }
  caps->set_triton(triton.Capability());
}

// Whether this GPU worker profiles (--ncu), set in `eval_options` and
// `caps`, and logged either way.
void ConfigureProfiler(ptxbench::worker::GpuEvalOptions* eval_options,
                       ptxbench::v1::Capabilities* caps) {
  const std::string configured = absl::GetFlag(FLAGS_ncu);
  if (configured.empty()) {
    caps->set_profiler_unavailable("profiling is off (start the worker with --ncu PATH)");
  } else if (absl::StatusOr<ptxbench::worker::NcuInstall> ncu = ptxbench::worker::FindNcu(configured);
             ncu.ok()) {
    eval_options->UseProfiler(*ncu);
    caps->set_profiler(ncu->Describe(configured));
  } else {
    caps->set_profiler_unavailable(std::string(ncu.status().message()));
  }
  if (caps->profiler().empty()) {
    ptxbench::LogInfo("profiler", {{"available", "no"}, {"why", caps->profiler_unavailable()}});
  } else {
    ptxbench::LogInfo("profiler", {{"available", caps->profiler()}, {"program", eval_options->ncu}});
  }
}

// Whether this GPU worker runs the memcheck gate (--compute-sanitizer), set
// in `eval_options` and `caps`, and logged either way.
void ConfigureSanitizer(ptxbench::worker::GpuEvalOptions* eval_options,
                        ptxbench::v1::Capabilities* caps) {
  const std::string configured = absl::GetFlag(FLAGS_compute_sanitizer);
  if (configured.empty()) {
    caps->set_sanitizer_unavailable(
        "the memcheck gate is off (start the worker with --compute-sanitizer PATH)");
  } else if (absl::StatusOr<ptxbench::worker::SanitizerInstall> found =
                 ptxbench::worker::FindSanitizer(configured);
             found.ok()) {
    eval_options->UseSanitizer(*found);
    caps->set_sanitizer(found->Describe(configured));
  } else {
    caps->set_sanitizer_unavailable(std::string(found.status().message()));
  }
  if (caps->sanitizer().empty()) {
    ptxbench::LogInfo("sanitizer", {{"available", "no"}, {"why", caps->sanitizer_unavailable()}});
  } else {
    ptxbench::LogInfo("sanitizer",
                      {{"available", caps->sanitizer()}, {"program", eval_options->sanitizer}});
  }
}

// The bundled definitions and --dataset's, each skipped file logged.
absl::StatusOr<std::unique_ptr<ptxbench::workloads::DefinitionRegistry>> LoadDefinitions() {
  auto definitions = ptxbench::workloads::DefinitionRegistry::Load(
      {absl::GetFlag(FLAGS_dataset), absl::GetFlag(FLAGS_prefer_dataset)});
  if (!definitions.ok()) return definitions.status();
  for (const std::string& p : (*definitions)->problems()) {
    ptxbench::LogWarning("dataset file skipped", {{"problem", p}});
  }
  return definitions;
}

// Runs `runner` until a stop signal, with the status server of
// --status-listen (healthy: registered, and `more`) and a stats line every
// --stats-interval-s. A worker's exit code.
int ServeUntilStopped(const ptxbench::executor::DaemonFlags& flags,
                      ptxbench::executor::ExecutorRunner& runner,
                      ptxbench::worker::WorkerMetrics& metrics,
                      std::function<absl::Status()> more) {
  std::unique_ptr<ptxbench::daemon::StatusServer> status_server;
  if (!flags.status_listen.empty()) {
    auto started = ptxbench::daemon::StatusServer::Start(
        flags.status_listen,
        {[&runner, more] { return ptxbench::executor::ExecutorHealth(runner, more); },
         [&metrics] { return metrics.Prometheus(); }});
    if (!started.ok()) return UsageError(std::string(started.status().message()));
    status_server = *std::move(started);
    ptxbench::LogInfo("status", {{"address", status_server->address()}});
  }
  ptxbench::daemon::PeriodicLog stats(flags.stats_interval, [&metrics] { metrics.LogStats(); });
  return ptxbench::executor::RunUntilStopped(runner, "worker");
}

// The real worker: GPU evaluation where it can, compile-only otherwise (it
// then registers no GPU, so the scheduler sends it only `eval: compile-only`
// tasks).
int RunRealWorker(const ptxbench::executor::DaemonFlags& flags) {
  const std::string& scheduler = flags.scheduler;
  const std::string& name = flags.name;
  if (flags.slots < 0) return UsageError("--slots must not be negative");
  if (absl::GetFlag(FLAGS_eval_deadline_s) < 1) return UsageError("--eval-deadline-s must be >= 1");
  if (absl::GetFlag(FLAGS_timed_calls) < 1 || absl::GetFlag(FLAGS_warmup_calls) < 0) {
    return UsageError("--timed-calls must be >= 1 and --warmup-calls >= 0");
  }

  auto definitions = LoadDefinitions();
  if (!definitions.ok()) return UsageError(std::string(definitions.status().message()));

  if (absl::GetFlag(FLAGS_sandbox_memory_gib) <= 0 || absl::GetFlag(FLAGS_sandbox_max_processes) < 8) {
    return UsageError("--sandbox-memory-gib must be > 0 and --sandbox-max-processes >= 8");
  }
  if (absl::GetFlag(FLAGS_sandbox_disk_mib) < 1 || absl::GetFlag(FLAGS_sandbox_cpus) <= 0) {
    return UsageError("--sandbox-disk-mib must be >= 1 and --sandbox-cpus > 0");
  }
  ptxbench::worker::EvaluationSettings settings;
  ptxbench::worker::SandboxSettings& sandbox_settings = settings.sandbox;
  sandbox_settings.uid = absl::GetFlag(FLAGS_sandbox_uid);
  sandbox_settings.memory_bytes =
      static_cast<uint64_t>(absl::GetFlag(FLAGS_sandbox_memory_gib) * 1073741824.0);
  sandbox_settings.max_processes = absl::GetFlag(FLAGS_sandbox_max_processes);
  sandbox_settings.candidate_uid_first = absl::GetFlag(FLAGS_candidate_uid_base);
  sandbox_settings.disk_bytes = static_cast<uint64_t>(absl::GetFlag(FLAGS_sandbox_disk_mib)) << 20;
  sandbox_settings.cpus = absl::GetFlag(FLAGS_sandbox_cpus);
  sandbox_settings.cgroup_root = absl::GetFlag(FLAGS_cgroup_root);
  settings.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  if (settings.cache_dir.empty()) settings.cache_dir = DefaultCacheDir();
  settings.cache_bytes =
      static_cast<uint64_t>(std::max(0.0, absl::GetFlag(FLAGS_cache_max_gib)) * 1073741824.0);
  settings.compile_only = absl::GetFlag(FLAGS_compile_only);
  settings.gpu.deadline = absl::Seconds(absl::GetFlag(FLAGS_eval_deadline_s));
  settings.gpu.seed = flags.seed;
  settings.gpu.timed_calls = absl::GetFlag(FLAGS_timed_calls);
  settings.gpu.warmup_calls = absl::GetFlag(FLAGS_warmup_calls);
  settings.gpu.reference_reuse = absl::Seconds(std::max(0, absl::GetFlag(FLAGS_reference_reuse_s)));
  absl::StatusOr<std::unique_ptr<ptxbench::worker::EvaluationStack>> stack =
      ptxbench::worker::EvaluationStack::Create(settings);
  if (!stack.ok()) return UsageError(std::string(stack.status().message()));
  const ptxbench::sandbox::Protections& protections = (*stack)->protections();
  for (const std::string& p : protections.active) ptxbench::LogInfo("protection", {{"active", p}});
  for (const std::string& w : protections.warnings) {
    ptxbench::LogWarning("protection missing", {{"warning", w}});
  }
  ptxbench::worker::Compiler& compiler = (*stack)->compiler();
  const std::string& version = (*stack)->toolkit_version();
  ptxbench::worker::GpuEvalOptions& eval_options = (*stack)->gpu_options();
  const std::vector<ptxbench::gpu::GpuInfo>& gpus = (*stack)->gpus();
  if (gpus.empty()) {
    ptxbench::LogInfo("offering compile-only evaluation", {{"why", (*stack)->why_no_gpu()}});
  }
  ptxbench::v1::Capabilities python_caps;  // torch_reference, triton
  if (!gpus.empty()) ProbePython(&eval_options, &python_caps);
  // Every GPU of the node, each kept fed: while one kernel runs on a GPU,
  // the next one compiles on the node's cores.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int slots = flags.slots > 0  ? flags.slots
                    : gpus.empty() ? cores
                                   : 2 * static_cast<int>(gpus.size());
  std::vector<ptxbench::worker::WorkerMetrics::Gpu> metered_gpus;
  for (const ptxbench::gpu::GpuInfo& g : gpus) metered_gpus.push_back({g.index, g.name});
  ptxbench::worker::WorkerMetrics metrics(metered_gpus, protections);
  eval_options.metrics = &metrics;
  eval_options.census_builds = absl::GetFlag(FLAGS_census_builds);
  // Before the evaluator takes its copy of the options.
  ptxbench::v1::Capabilities tool_caps;
  if (!gpus.empty()) ConfigureProfiler(&eval_options, &tool_caps);
  if (!gpus.empty()) ConfigureSanitizer(&eval_options, &tool_caps);
  ptxbench::worker::GpuEvaluator& evaluator = (*stack)->Evaluator(definitions->get(), name);
  ptxbench::worker::GpuPool pool(gpus);
  ptxbench::executor::ExecutorRunner* running = nullptr;
  ptxbench::worker::GpuWorkerHandler gpu_handler(
      &evaluator, &compiler, definitions->get(), &pool, &metrics, name, version,
      [&running](const std::string& why) {
        ptxbench::LogError("stopping: no healthy GPU", {{"why", why}});
        if (running != nullptr) running->Stop();
      });
  ptxbench::worker::CompileOnlyHandler compile_handler(&compiler, definitions->get(), &metrics,
                                                       name, version);

  ptxbench::executor::ExecutorRunner::Options runner_options;
  runner_options.scheduler_address = scheduler;
  runner_options.security = ptxbench::executor::ConnectionSecurityOrExit("ptxbench-worker");
  runner_options.kind = ptxbench::v1::WORKER;
  runner_options.name = name;
  runner_options.capabilities = ptxbench::worker::GpuWorkerCapabilities(gpus, slots);
  for (const std::string& p : protections.active) runner_options.capabilities.add_protections(p);
  for (const std::string& w : protections.warnings) {
    runner_options.capabilities.add_protection_warnings(w);
  }
  runner_options.capabilities.set_torch_reference(python_caps.torch_reference());
  runner_options.capabilities.set_triton(python_caps.triton());
  runner_options.capabilities.set_profiler(tool_caps.profiler());
  runner_options.capabilities.set_profiler_unavailable(tool_caps.profiler_unavailable());
  runner_options.capabilities.set_sanitizer(tool_caps.sanitizer());
  runner_options.capabilities.set_sanitizer_unavailable(
      gpus.empty() ? "no GPU: compile-only" : tool_caps.sanitizer_unavailable());
  runner_options.slots = slots;
  ptxbench::worker::StopSignalGuard guarded(
      gpus.empty() ? static_cast<ptxbench::executor::TaskHandler*>(&compile_handler) : &gpu_handler);
  ptxbench::worker::MeteredHandler handler(&guarded, &metrics);
  ptxbench::executor::ExecutorRunner runner(std::move(runner_options), &handler);
  running = &runner;
  std::string gpu_names;
  for (const ptxbench::gpu::GpuInfo& g : gpus) {
    gpu_names += (gpu_names.empty() ? "" : ",") + std::to_string(g.index) + ":" + g.name;
  }
  ptxbench::LogInfo("starting", {{"scheduler", scheduler},
                                 {"name", name},
                                 {"slots", std::to_string(slots)},
                                 {"mode", gpus.empty() ? "compile-only" : "gpu"},
                                 {"gpus", gpu_names},
                                 {"runner", eval_options.runner_path},
                                 {"cache", (*stack)->compiler_options().cache_dir},
                                 {"cache_max_mib",
                                  std::to_string((*stack)->compiler_options().cache_bytes >> 20)},
                                 {"toolkit", version}});
  // A GPU worker whose every GPU failed its health check is unhealthy (it
  // also stops); a compile-only one needs none.
  return ServeUntilStopped(flags, runner, metrics, [&pool, &gpus]() -> absl::Status {
    if (!gpus.empty() && pool.healthy_count() == 0) {
      return absl::UnavailableError("no healthy GPU left");
    }
    return absl::OkStatus();
  });
}

}  // namespace

int main(int argc, char** argv) {
  ptxbench::daemon::StartDaemonProcess();
  ptxbench::executor::ParseCommandLineOrExit(argc, argv);
  ptxbench::InitLogging("worker");

  const ptxbench::executor::DaemonFlags flags =
      ptxbench::executor::ReadDaemonFlags({.name = HostName(), .latency = absl::Milliseconds(20)});
  if (!flags.simulate) return RunRealWorker(flags);
  const int slots = flags.slots != 0 ? flags.slots : 4;
  const int gpus = absl::GetFlag(FLAGS_gpus);
  if (slots < 1) return UsageError("--slots must be at least 1");
  if (gpus < 0) return UsageError("--gpus must not be negative");
  const std::string gpu_arch = absl::GetFlag(FLAGS_gpu_arch);
  // A GPU's architecture: sm_NN, as it parses to itself (not a family).
  if (ptxbench::ParseArchitectures({gpu_arch}).value_or(std::vector<std::string>{}) !=
      std::vector<std::string>{gpu_arch}) {
    return UsageError("--gpu-arch must be a GPU architecture such as sm_90 or sm_100");
  }
  if (absl::Status problem = ptxbench::executor::SimulationProblem(flags); !problem.ok()) {
    return UsageError(std::string(problem.message()));
  }

  // Requests that name no workload run on their definition's, as on a real
  // worker, so that results name workloads of the dataset.
  auto definitions = LoadDefinitions();
  if (!definitions.ok()) return UsageError(std::string(definitions.status().message()));
  ptxbench::worker::SimulatedWorkerHandler::Options handler_options;
  handler_options.definitions = definitions->get();
  handler_options.seed = flags.seed;
  handler_options.worker_id = flags.name;
  handler_options.latency = flags.latency;
  handler_options.faults = flags.faults;
  std::vector<ptxbench::worker::WorkerMetrics::Gpu> metered_gpus;
  for (int i = 0; i < gpus; ++i) metered_gpus.push_back({i, "Simulated H200"});
  ptxbench::worker::WorkerMetrics metrics(metered_gpus, {});
  handler_options.metrics = &metrics;
  handler_options.gpus = gpus;
  ptxbench::worker::SimulatedWorkerHandler simulated(std::move(handler_options));
  ptxbench::worker::MeteredHandler handler(&simulated, &metrics);

  ptxbench::executor::ExecutorRunner::Options runner_options;
  runner_options.scheduler_address = flags.scheduler;
  runner_options.security = ptxbench::executor::ConnectionSecurityOrExit("ptxbench-worker");
  runner_options.kind = ptxbench::v1::WORKER;
  runner_options.name = flags.name;
  runner_options.capabilities =
      ptxbench::worker::SimulatedWorkerCapabilities(gpus, slots, gpu_arch);
  runner_options.slots = slots;
  ptxbench::executor::ExecutorRunner runner(std::move(runner_options), &handler);
  ptxbench::LogInfo("starting", {{"scheduler", flags.scheduler},
                                 {"name", flags.name},
                                 {"slots", std::to_string(slots)},
                                 {"gpus", std::to_string(gpus)},
                                 {"simulated", "true"}});
  return ServeUntilStopped(flags, runner, metrics, nullptr);
}
