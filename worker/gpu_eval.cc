#include "worker/gpu_eval.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/hash.h"
#include "worker/runner/job.h"
#include "workloads/launch_spec.h"
#include "worker/sandbox.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;
namespace fs = std::filesystem;

bool Failed(v1::EvalStatus s) { return s != v1::PASSED; }

// The workloads to run: the requested uuids (all when none), with every
// axis value; an error names an unknown uuid.
absl::StatusOr<std::vector<runner::WorkloadSpec>> Workloads(const workloads::Definition& d,
                                                            const v1::EvalRequest& request) {
  const std::set<std::string> wanted(request.workload_uuids().begin(),
                                     request.workload_uuids().end());
  std::set<std::string> missing = wanted;
  std::vector<runner::WorkloadSpec> specs;
  for (const workloads::Workload& w : d.workloads) {
    if (!wanted.empty() && !wanted.contains(w.uuid)) continue;
    missing.erase(w.uuid);
    absl::StatusOr<std::map<std::string, int64_t>> axes = d.AxisValues(w);
    if (!axes.ok()) return axes.status();
    specs.push_back({w.uuid, *std::move(axes)});
  }
  if (!missing.empty()) {
    return absl::NotFoundError(absl::StrCat("definition ", d.name, " has no workload ",
                                            absl::StrJoin(missing, ", ")));
  }
  if (specs.empty()) return absl::NotFoundError(absl::StrCat("definition ", d.name, " has no workloads"));
  return specs;
}

// Fills status, all_passed and min_speedup from the traces.
void Summarize(v1::EvalResult& result) {
  v1::EvalStatus status = v1::PASSED;
  double min_speedup = std::numeric_limits<double>::infinity();
  for (const v1::WorkloadTrace& t : result.traces()) {
    if (status == v1::PASSED && Failed(t.status())) status = t.status();
    if (t.speedup() > 0) min_speedup = std::min(min_speedup, t.speedup());
  }
  result.set_status(status);
  result.set_all_passed(status == v1::PASSED && result.traces_size() > 0);
  result.set_min_speedup(std::isinf(min_speedup) || !result.all_passed() ? 0 : min_speedup);
  for (const v1::WorkloadTrace& t : result.traces()) {
    if (t.status() == v1::INFRA_ERROR && result.error().empty() && t.errors_size() > 0) {
      result.set_error(t.errors(0));
    }
  }
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

GpuEvaluator::GpuEvaluator(Compiler* compiler, const workloads::DefinitionRegistry* definitions,
                           GpuEvalOptions options, std::string worker_id,
                           std::string toolkit_version)
    : compiler_(compiler),
      definitions_(definitions),
      options_(std::move(options)),
      worker_id_(std::move(worker_id)),
      toolkit_version_(std::move(toolkit_version)) {}

CompiledKernel GpuEvaluator::Compile(const v1::EvalRequest& request) {
  return CompileForEvaluation(*compiler_, *definitions_, request, worker_id_, toolkit_version_);
}

v1::EvalResult GpuEvaluator::Evaluate(const v1::EvalRequest& request, const gpu::GpuInfo& gpu,
                                      bool* suspect) {
  return Run(request, Compile(request), gpu, suspect);
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

  runner::RunnerJob job;
  job.artifact = fs::absolute(compiled.artifact).string();
  job.definition_json = compiled.definition->json;
  job.language = request.language() == "ptx" ? "ptx" : "cuda";
  if (job.language == "ptx") {
    job.launch_spec = workloads::FindLaunchSpecJson(request.kernel_source()).value_or("");
  }
  job.workloads = *workloads;
  job.seed = options_.seed != 0 ? options_.seed : StableHash64(request.kernel_sha256());
  job.trials = options_.trials;
  job.warmup_calls = options_.warmup_calls;
  job.timed_calls = options_.timed_calls;

  SandboxOptions sandbox;
  sandbox.argv = {options_.runner_path, "--job", "{dir}/job.json", "--out", "{dir}/results.jsonl"};
  sandbox.files = {{"job.json", runner::SerializeJob(job)}};
  sandbox.collect = {"results.jsonl"};
  sandbox.deadline = options_.deadline;
  sandbox.gpu_index = gpu.index;
  sandbox.temp_root = options_.temp_root;
  absl::StatusOr<SandboxOutcome> outcome = RunSandboxed(sandbox);
  if (!outcome.ok()) return infra(absl::StrCat("starting the runner: ", outcome.status().message()));

  runner::RunnerOutput out = runner::ParseRunnerOutput(outcome->collected["results.jsonl"]);
  std::map<std::string, v1::WorkloadTrace> by_uuid;
  for (v1::WorkloadTrace& t : out.traces) by_uuid[t.workload_uuid()] = std::move(t);
  // A runner that crashed or hung leaves the workload it was on with the way
  // it died; one that stopped because the candidate broke the CUDA context
  // wrote that workload's trace itself. Workloads after either were not run.
  const SubprocessResult& p = outcome->process;
  // (A candidate that calls exit(3) itself leaves its workload unfinished.)
  const bool context_lost =
      p.exited && p.exit_code == runner::kRunnerContextLost && out.unfinished.empty();
  const bool crashed = outcome->status != v1::EVAL_STATUS_UNSPECIFIED && !context_lost;
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
    } else {
      trace->set_status(v1::INFRA_ERROR);
      trace->add_errors(absl::StrCat("the runner wrote no result for this workload (exit code ",
                                     p.exit_code, ")\n", outcome->diagnostic));
    }
  }
  *suspect = crashed || context_lost;
  Summarize(result);
  return finish();
}

absl::Status GpuEvaluator::CheckHealth(int gpu_index) {
  if (options_.runner_path.empty()) return absl::FailedPreconditionError("ptxbench-runner not found");
  SandboxOptions sandbox;
  sandbox.argv = {options_.runner_path, "--health"};
  sandbox.deadline = options_.health_deadline;
  sandbox.gpu_index = gpu_index;
  sandbox.temp_root = options_.temp_root;
  absl::StatusOr<SandboxOutcome> outcome = RunSandboxed(sandbox);
  if (!outcome.ok()) return outcome.status();
  if (outcome->status == v1::EVAL_STATUS_UNSPECIFIED) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("GPU ", gpu_index, ": ", outcome->diagnostic));
}

}  // namespace ptxbench::worker
