// reference_timing_bench: the reference (cuBLAS, cuDNN) of every bundled
// definition at every workload, timed three ways, for the table of
// bench/gpu/NOTES.md:
//   --method harness  the evaluation's method (worker/runner/measure/bracket.h): a
//                     reference-only job of ptxbench-runner, the library in
//                     the reference host, bracketed by the harness's events;
//                     --repeats N runs it N times (CV across runs);
//   --method cupti    the method before the harness split: in one process,
//                     the CUPTI span of each call (worker/gpu/timing.h);
//   --method ncu      a few flushed calls per workload with events only, for
//                     `ncu --metrics gpu__time_duration.sum` to time (one
//                     "== workload" line before each, to split its output).
// Every call gets fresh inputs and a cold L2, as in an evaluation.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "worker/gpu/sample_stats.h"
#include "worker/gpu/timing.h"
#include "worker/gpu_eval.h"
#include "worker/harness_process.h"
#include "worker/runner/measure/workload_eval.h"
#include "worker/runner/wire/job.h"
#include "workloads/registry.h"

ABSL_FLAG(std::string, method, "harness", "harness | cupti | ncu");
ABSL_FLAG(std::vector<std::string>, definitions,
          std::vector<std::string>({"gemm_n7168_k5120", "mha_with_lse_d128",
                                    "mha_with_lse_d128_causal", "mha_bwd_d128",
                                    "mha_bwd_d128_causal"}),
          "definitions to time");
ABSL_FLAG(std::string, workload, "", "only this workload uuid");
ABSL_FLAG(int, repeats, 1, "harness: runs of each definition (CV across runs)");
ABSL_FLAG(int, trials, 3, "trials per workload");
ABSL_FLAG(int, ncu_calls, 5, "ncu: calls per workload");
ABSL_FLAG(bool, calibration_survey, false,
          "harness: also log the call overhead measured with spin kernels of other launch shapes");
ABSL_FLAG(int, calls_per_bracket, 1,
          "harness: calls of the reference in each timed bracket (alternating buffer sets); a "
          "sample is the bracket less the call overhead, divided by this");

namespace ptxbench {
namespace {

namespace v1 = ::ptxbench::v1;

std::vector<runner::WorkloadSpec> Workloads(const workloads::Definition& d) {
  std::vector<runner::WorkloadSpec> out;
  for (const workloads::Workload& w : d.workloads) {
    if (!absl::GetFlag(FLAGS_workload).empty() && w.uuid != absl::GetFlag(FLAGS_workload)) continue;
    out.push_back({w.uuid, *d.AxisValues(w), {}});
  }
  return out;
}

std::string AxesText(const std::map<std::string, int64_t>& axes, const workloads::Definition& d) {
  std::string text;
  for (const workloads::Axis& a : d.axes) {
    if (a.is_const) continue;
    absl::StrAppend(&text, text.empty() ? "" : ",", a.name, "=", axes.at(a.name));
  }
  return text;
}

// The harness's figures: reference-only runs of ptxbench-runner.
int RunHarness(const workloads::DefinitionRegistry& registry) {
  const std::string runner = worker::FindRunner();
  if (runner.empty()) {
    std::fprintf(stderr, "ptxbench-runner not found\n");
    return 1;
  }
  std::printf("| definition | workload | harness median ms (per run) | mean | CV across runs |\n");
  std::printf("|---|---|---|---:|---:|\n");
  for (const std::string& name : absl::GetFlag(FLAGS_definitions)) {
    const workloads::Definition* d = *registry.Find(name);
    runner::RunnerJob job;
    job.reference_only = true;
    job.calibration_survey = absl::GetFlag(FLAGS_calibration_survey);
    job.calls_per_bracket = absl::GetFlag(FLAGS_calls_per_bracket);
    job.definition_json = d->json;
    job.workloads = Workloads(*d);
    job.trials = absl::GetFlag(FLAGS_trials);
    job.isolation.candidate_host = worker::FindCandidateHost(runner);
    std::map<std::string, std::vector<double>> runs;
    for (int r = 0; r < absl::GetFlag(FLAGS_repeats); ++r) {
      job.seed = StableHash64(absl::StrCat(name, "/", r)) | 1;
      worker::HarnessProcessOptions harness;
      harness.argv = {runner, "--job", "{dir}/job.json", "--out", "{dir}/results.jsonl"};
      harness.files = {{"job.json", runner::SerializeJob(job)}};
      harness.collect = {"results.jsonl"};
      harness.deadline = absl::Minutes(10);
      harness.gpu_index = 0;
      absl::StatusOr<worker::HarnessProcessOutcome> out = worker::RunHarnessProcess(harness);
      if (!out.ok() || out->status != v1::EVAL_STATUS_UNSPECIFIED) {
        std::fprintf(stderr, "%s: the runner failed: %s\n", name.c_str(),
                     out.ok() ? out->diagnostic.c_str() : out.status().ToString().c_str());
        return 1;
      }
      for (const v1::WorkloadTrace& t : runner::ParseRunnerOutput(out->collected["results.jsonl"]).traces) {
        if (t.status() != v1::PASSED) {
          std::fprintf(stderr, "%s %s: %s\n", name.c_str(), t.workload_uuid().c_str(),
                       t.errors_size() > 0 ? t.errors(0).c_str() : "failed");
          continue;
        }
        runs[t.workload_uuid()].push_back(t.reference_latency_ms());
        if (r == 0) std::fprintf(stderr, "%s", t.log().c_str());
      }
    }
    for (const runner::WorkloadSpec& w : job.workloads) {
      const std::vector<double>& v = runs[w.uuid];
      const gpu::SampleStats s = gpu::Summarize(v);
      std::string each;
      for (double x : v) absl::StrAppendFormat(&each, "%s%.4f", each.empty() ? "" : " ", x);
      std::printf("| %s | %s | %s | %.4f | %.2f%% |\n", name.c_str(), AxesText(w.axes, *d).c_str(),
                  each.c_str(), s.mean, 100 * s.cv);
    }
  }
  return 0;
}

// In one process: the CUPTI span (or events for ncu) of each call.
absl::Status RunInProcess(const workloads::DefinitionRegistry& registry, bool ncu) {
  PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaSetDevice(0), "cudaSetDevice"));
  cudaStream_t stream;
  PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream"));
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<gpu::L2Flusher> flusher, gpu::L2Flusher::Create());
  if (!ncu) {
    std::printf("| definition | workload | CUPTI median ms (mean of %d trials) | CV of calls |\n",
                absl::GetFlag(FLAGS_trials));
    std::printf("|---|---|---:|---:|\n");
  }
  for (const std::string& name : absl::GetFlag(FLAGS_definitions)) {
    const workloads::Definition* d = *registry.Find(name);
    for (const runner::WorkloadSpec& w : Workloads(*d)) {
      PTXB_ASSIGN_OR_RETURN(std::unique_ptr<runner::Reference> ref, runner::MakeReference(*d, w.axes));
      PTXB_ASSIGN_OR_RETURN(runner::WorkloadBuffers buffers,
                            runner::WorkloadBuffers::Allocate(*d, w.axes, false));
      gpu::TimingOptions options;
      options.method = ncu ? gpu::SpanMethod::kEvents : gpu::SpanMethod::kCupti;
      if (ncu) {
        options.warmup_calls = 0;  // every call is one ncu divides by
        options.timed_calls = absl::GetFlag(FLAGS_ncu_calls);
        std::printf("== %s %s\n", name.c_str(), AxesText(w.axes, *d).c_str());
        std::fflush(stdout);
      }
      std::vector<double> medians, cvs;
      for (int t = 0; t < (ncu ? 1 : absl::GetFlag(FLAGS_trials)); ++t) {
        gpu::TimingHooks hooks;
        hooks.before = [&](cudaStream_t s, int call) -> absl::Status {
          const int set = call % runner::WorkloadBuffers::kSets;
          PTXB_RETURN_IF_ERROR(buffers.Prepare(*ref, StableHash64(absl::StrCat(t, "/", call)), false, s));
          return buffers.Stage(set, s);
        };
        PTXB_ASSIGN_OR_RETURN(
            gpu::TimingResult r,
            gpu::TimeCalls(
                [&](cudaStream_t s, int call) {
                  const int set = call % runner::WorkloadBuffers::kSets;
                  return ref->Run(buffers.inputs(set), buffers.outputs(set), s);
                },
                stream, flusher.get(), options, hooks));
        medians.push_back(r.stats.median);
        cvs.push_back(r.stats.cv);
      }
      PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaDeviceSynchronize(), "sync"));
      if (!ncu) {
        std::printf("| %s | %s | %.4f | %.2f%% |\n", name.c_str(), AxesText(w.axes, *d).c_str(),
                    gpu::Summarize(medians).mean, 100 * gpu::Summarize(cvs).mean);
        std::fflush(stdout);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ptxbench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  auto registry =
      ptxbench::workloads::DefinitionRegistry::Load({});
  if (!registry.ok()) {
    std::fprintf(stderr, "%s\n", registry.status().ToString().c_str());
    return 1;
  }
  const std::string method = absl::GetFlag(FLAGS_method);
  if (method == "harness") return ptxbench::RunHarness(**registry);
  absl::Status s = ptxbench::RunInProcess(**registry, method == "ncu");
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
