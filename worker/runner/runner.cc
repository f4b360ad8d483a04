#include "worker/runner/runner.h"

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"
#include "worker/runner/candidate.h"
#include "worker/runner/cost.h"
#include "worker/runner/references.h"
#include "worker/runner/workload_eval.h"

namespace ptxbench::runner {
namespace {

namespace v1 = ::ptxbench::v1;
using gpu::CudaStatus;

// Why a candidate's call sequence stopped: a failed check, a non-zero
// return of ptxb_entry, or a CUDA error (which ends the process's usefulness).
struct Stop {
  v1::EvalStatus status = v1::EVAL_STATUS_UNSPECIFIED;
  std::vector<std::string> errors;
  bool context_lost = false;
};

// Seed of one call: a function of the job's seed, the workload, the phase
// ("ref", "check", "time"), the trial and the call, so a rerun sees the same
// inputs and no two calls of a run see the same ones.
uint64_t CallSeed(uint64_t root, const std::string& uuid, absl::string_view phase, int trial,
                  int call) {
  return StableHash64(absl::StrCat(root, "/", uuid, "/", phase, "/", trial, "/", call));
}

// True when the CUDA context still works (no sticky error after a candidate).
bool ContextAlive() {
  return cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess;
}

struct Gpu {
  cudaStream_t stream = nullptr;
  std::unique_ptr<gpu::L2Flusher> flusher;
  std::string name;
};

absl::Status InitGpu(Gpu& g) {
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(0), "cudaSetDevice(0)"));
  cudaDeviceProp prop{};
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"));
  g.name = prop.name;
  // Non-blocking: the legacy default stream a kernel might use does not
  // silently order itself with the harness's work.
  PTXB_RETURN_IF_ERROR(
      CudaStatus(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  PTXB_ASSIGN_OR_RETURN(g.flusher, gpu::L2Flusher::Create());
  return absl::OkStatus();
}

gpu::TimingOptions Timing(const RunnerJob& job) {
  gpu::TimingOptions o;
  o.warmup_calls = job.warmup_calls;
  o.timed_calls = job.timed_calls;
  return o;
}

double MeanOfMedians(const std::vector<double>& medians) {
  double sum = 0;
  for (double m : medians) sum += m;
  return medians.empty() ? 0 : sum / static_cast<double>(medians.size());
}

// The reference's latency at one workload: `trials` timing runs, each call
// on fresh inputs, mean of the per-trial medians.
absl::StatusOr<double> TimeReference(const workloads::Definition& def, const WorkloadSpec& w,
                                     const RunnerJob& job, int trials, Gpu& g,
                                     std::string* log) {
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<Reference> ref, MakeReference(def, w.axes));
  PTXB_ASSIGN_OR_RETURN(WorkloadBuffers buffers, WorkloadBuffers::Allocate(def, w.axes, false));
  std::vector<double> medians;
  for (int t = 0; t < trials; ++t) {
    gpu::TimingHooks hooks;
    hooks.before = [&](cudaStream_t stream, int call) {
      return buffers.Prepare(*ref, call % WorkloadBuffers::kSets,
                             CallSeed(job.seed, w.uuid, "ref", t, call), stream);
    };
    PTXB_ASSIGN_OR_RETURN(
        gpu::TimingResult r,
        gpu::TimeCalls(
            [&](cudaStream_t stream, int call) {
              const int set = call % WorkloadBuffers::kSets;
              return ref->Run(buffers.inputs(set), buffers.outputs(set), stream);
            },
            g.stream, g.flusher.get(), Timing(job), hooks));
    medians.push_back(r.stats.median);
    absl::StrAppendFormat(log, "reference %s trial %d: median %.4f ms (cv %.2f%%, %s)\n",
                          ref->Name(), t, r.stats.median, 100 * r.stats.cv, r.method);
  }
  return MeanOfMedians(medians);
}

// Runs the candidate once on set 0 after fresh inputs; the stop reason, if any.
std::optional<Stop> CheckedCall(Candidate& candidate, Reference& ref, WorkloadBuffers& buffers,
                                uint64_t seed, const reference::Tolerance& tol, Gpu& g,
                                CallCheck* check) {
  // The inputs must be complete before the call: a kernel that works on a
  // stream of its own does not wait for the harness's stream.
  absl::Status s = buffers.Prepare(ref, 0, seed, g.stream);
  if (s.ok()) s = CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize(before run)");
  if (!s.ok()) {
    return Stop{v1::INFRA_ERROR, {absl::StrCat("preparing inputs: ", s.message())}, false};
  }
  if (absl::Status call = candidate.Call(buffers.Views(0), buffers.ViewCount(), g.stream);
      !call.ok()) {
    return Stop{v1::RUNTIME_ERROR, {std::string(call.message())}, !ContextAlive()};
  }
  absl::StatusOr<CallCheck> c = buffers.Check(0, tol, g.stream);
  if (!c.ok()) {
    return Stop{v1::RUNTIME_ERROR, {absl::StrCat("CUDA error after run(): ", c.status().message())},
                !ContextAlive()};
  }
  *check = *c;
  if (!c->passed) return Stop{v1::INCORRECT_NUMERICAL, c->errors, false};
  return std::nullopt;
}

class JobRunner {
 public:
  JobRunner(const RunnerJob& job, std::ostream& out) : job_(job), out_(out) {}

  int Run() {
    absl::StatusOr<workloads::Definition> def = workloads::ParseDefinition(job_.definition_json, "job");
    if (!def.ok()) return FailAll(v1::INFRA_ERROR, std::string(def.status().message()), kRunnerBadJob);
    def_ = *std::move(def);
    trials_ = job_.trials > 0 ? job_.trials : std::max(def_.trials, 1);
    tol_ = {def_.tolerance.atol, def_.tolerance.rtol, def_.tolerance.required_matched_ratio};
    if (absl::Status s = InitGpu(gpu_); !s.ok()) {
      return FailAll(v1::INFRA_ERROR, absl::StrCat("GPU: ", s.message()), kRunnerOk);
    }
    // 1. The baseline, before any of the candidate's code is in the process.
    for (const WorkloadSpec& w : job_.workloads) {
      std::string log;
      absl::StatusOr<double> ms = TimeReference(def_, w, job_, trials_, gpu_, &log);
      ref_log_[w.uuid] = log;
      if (ms.ok()) {
        ref_ms_[w.uuid] = *ms;
      } else {
        ref_error_[w.uuid] = absl::StrCat("reference: ", ms.status().message());
      }
    }
    // 2. The candidate.
    absl::StatusOr<std::unique_ptr<Candidate>> candidate = LoadCandidate();
    if (!candidate.ok()) {
      return FailAll(candidate.status().code() == absl::StatusCode::kAborted ? v1::RUNTIME_ERROR
                                                                              : v1::INFRA_ERROR,
                     std::string(candidate.status().message()), kRunnerOk);
    }
    candidate_ = *std::move(candidate);
    // 3. Every workload; a lost CUDA context ends the run.
    for (const WorkloadSpec& w : job_.workloads) {
      out_ << StartedLine(w.uuid) << std::flush;
      bool context_lost = false;
      v1::WorkloadTrace trace = Evaluate(w, &context_lost);
      out_ << TraceLine(trace) << std::flush;
      if (context_lost) return kRunnerContextLost;
    }
    return kRunnerOk;
  }

 private:
  // kAborted: the submission's fault (does not load, no such entry).
  absl::StatusOr<std::unique_ptr<Candidate>> LoadCandidate() {
    if (job_.language != "ptx") return LoadCudaCandidate(job_.artifact);
    absl::StatusOr<workloads::LaunchSpec> spec = workloads::ParseLaunchSpec(job_.launch_spec);
    if (!spec.ok()) return absl::AbortedError(spec.status().message());
    std::vector<std::string> axis_order;
    for (const workloads::Axis& a : def_.axes) axis_order.push_back(a.name);
    return LoadPtxCandidate(job_.artifact, *spec, std::move(axis_order));
  }

  int FailAll(v1::EvalStatus status, const std::string& error, int code) {
    for (const WorkloadSpec& w : job_.workloads) {
      v1::WorkloadTrace trace;
      trace.set_workload_uuid(w.uuid);
      for (const auto& [k, v] : w.axes) (*trace.mutable_axes())[k] = v;
      trace.set_status(status);
      trace.add_errors(error);
      out_ << TraceLine(trace) << std::flush;
    }
    return code;
  }

  v1::WorkloadTrace Evaluate(const WorkloadSpec& w, bool* context_lost) {
    v1::WorkloadTrace trace;
    trace.set_workload_uuid(w.uuid);
    for (const auto& [k, v] : w.axes) (*trace.mutable_axes())[k] = v;
    std::string log = absl::StrFormat(
        "gpu %s; inputs from seed %d (per call: StableHash64(\"seed/uuid/phase/trial/call\")); "
        "%d trials, %d warm-up + %d timed calls\n",
        gpu_.name, job_.seed, trials_, job_.warmup_calls, job_.timed_calls);
    log += ref_log_[w.uuid];
    auto finish = [&](v1::EvalStatus status, const std::vector<std::string>& errors) {
      trace.set_status(status);
      for (const std::string& e : errors) trace.add_errors(e);
      trace.set_log(log);
      return trace;
    };
    if (auto it = ref_error_.find(w.uuid); it != ref_error_.end()) {
      return finish(v1::INFRA_ERROR, {it->second});
    }
    absl::StatusOr<std::unique_ptr<Reference>> ref = MakeReference(def_, w.axes);
    if (!ref.ok()) return finish(v1::INFRA_ERROR, {std::string(ref.status().message())});
    absl::StatusOr<WorkloadBuffers> buffers = WorkloadBuffers::Allocate(def_, w.axes, true);
    if (!buffers.ok()) return finish(v1::INFRA_ERROR, {std::string(buffers.status().message())});

    if (absl::Status s = candidate_->SetWorkload(w.axes); !s.ok()) {
      return finish(v1::RUNTIME_ERROR, {std::string(s.message())});
    }
    // Correctness: one call per trial on fresh inputs.
    CallCheck check;
    for (int t = 0; t < trials_; ++t) {
      std::optional<Stop> stop = CheckedCall(*candidate_, **ref, *buffers,
                                             CallSeed(job_.seed, w.uuid, "check", t, 0), tol_, gpu_,
                                             &check);
      trace.set_max_abs_error(std::max(trace.max_abs_error(), check.max_abs_error));
      trace.set_max_rel_error(std::max(trace.max_rel_error(), check.max_rel_error));
      trace.set_matched_ratio(t == 0 ? check.matched_ratio
                                     : std::min(trace.matched_ratio(), check.matched_ratio));
      if (stop) {
        *context_lost = stop->context_lost;
        absl::StrAppend(&log, "correctness trial ", t, ": ", v1::EvalStatus_Name(stop->status), "\n");
        return finish(stop->status, stop->errors);
      }
    }
    absl::StrAppend(&log, "correctness: ", trials_, " trials passed\n");

    // Timing, with every call's outputs checked.
    std::vector<double> medians;
    for (int t = 0; t < trials_; ++t) {
      std::optional<Stop> stop;
      gpu::TimingHooks hooks;
      hooks.before = [&](cudaStream_t stream, int call) {
        return buffers->Prepare(**ref, call % WorkloadBuffers::kSets,
                                CallSeed(job_.seed, w.uuid, "time", t, call), stream);
      };
      hooks.after = [&](int call) -> absl::Status {
        PTXB_ASSIGN_OR_RETURN(CallCheck c,
                              buffers->Check(call % WorkloadBuffers::kSets, tol_, gpu_.stream));
        if (c.passed) return absl::OkStatus();
        std::vector<std::string> errors = {absl::StrCat(
            "the outputs of timed call ", call, " (trial ", t,
            ", fresh inputs) are wrong although the correctness calls passed: results must be "
            "computed by every call, not cached")};
        errors.insert(errors.end(), c.errors.begin(), c.errors.end());
        stop = Stop{v1::INCORRECT_NUMERICAL, errors, false};
        return absl::CancelledError("check failed");
      };
      absl::StatusOr<gpu::TimingResult> r = gpu::TimeCalls(
          [&](cudaStream_t stream, int call) -> absl::Status {
            const int set = call % WorkloadBuffers::kSets;
            absl::Status s = candidate_->Call(buffers->Views(set), buffers->ViewCount(), stream);
            if (s.ok()) return s;
            stop = Stop{v1::RUNTIME_ERROR, {std::string(s.message())}, false};
            return absl::AbortedError("the call failed");
          },
          gpu_.stream, gpu_.flusher.get(), Timing(job_), hooks);
      if (!r.ok()) {
        if (!stop) {
          stop = Stop{v1::RUNTIME_ERROR,
                      {absl::StrCat("CUDA error while timing: ", r.status().message())},
                      !ContextAlive()};
        }
        *context_lost = stop->context_lost;
        absl::StrAppend(&log, "timing trial ", t, ": ", v1::EvalStatus_Name(stop->status), "\n");
        return finish(stop->status, stop->errors);
      }
      medians.push_back(r->stats.median);
      absl::StrAppendFormat(&log,
                            "candidate trial %d: median %.4f ms (min %.4f, max %.4f, cv %.2f%%, "
                            "%s); all %d calls' outputs checked\n",
                            t, r->stats.median, r->stats.min, r->stats.max, 100 * r->stats.cv,
                            r->method, job_.warmup_calls + job_.timed_calls);
    }
    const double latency = MeanOfMedians(medians);
    const double ref_ms = ref_ms_[w.uuid];
    trace.set_latency_ms(latency);
    trace.set_reference_latency_ms(ref_ms);
    trace.set_speedup(latency > 0 ? ref_ms / latency : 0);
    absl::StatusOr<WorkloadCost> cost = CostOf(def_, w.axes);
    if (cost.ok()) {
      trace.set_roofline_fraction(RooflineFraction(*cost, PeaksFor(gpu_.name), latency));
      if (cost->flops > 0 && latency > 0) {
        absl::StrAppendFormat(&log, "%.1f TFLOP/s; reference %.1f TFLOP/s\n",
                              cost->flops / (latency * 1e9), cost->flops / (ref_ms * 1e9));
      }
    }
    return finish(v1::PASSED, {});
  }

  const RunnerJob& job_;
  std::ostream& out_;
  workloads::Definition def_;
  int trials_ = 1;
  reference::Tolerance tol_;
  Gpu gpu_;
  std::unique_ptr<Candidate> candidate_;
  std::map<std::string, double> ref_ms_;
  std::map<std::string, std::string> ref_log_, ref_error_;
};

}  // namespace

int RunJob(const RunnerJob& job, std::ostream& out) { return JobRunner(job, out).Run(); }

}  // namespace ptxbench::runner
