#include "worker/runner/measure/workload_trace.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/hash.h"
#include "worker/gpu/sample_stats.h"
#include "worker/runner/measure/cost.h"

namespace ptxbench::runner {

namespace v1 = ::ptxbench::v1;

uint64_t CallSeed(uint64_t root, const std::string& uuid, absl::string_view phase, int trial,
                  int call) {
  return StableHash64(absl::StrCat(root, "/", uuid, "/", phase, "/", trial, "/", call));
}

void SetIdentity(v1::WorkloadTrace& trace, const WorkloadSpec& workload) {
  trace.set_workload_uuid(workload.uuid);
  trace.mutable_axes()->clear();
  for (const auto& [k, v] : workload.axes) (*trace.mutable_axes())[k] = v;
}

v1::WorkloadTrace FailedTrace(const WorkloadSpec& workload, v1::EvalStatus status,
                              const std::string& error) {
  v1::WorkloadTrace t;
  SetIdentity(t, workload);
  t.set_status(status);
  t.add_errors(error);
  return t;
}

std::string MethodLine(absl::string_view gpu_name, const RunnerJob& job, int trials) {
  const std::string seed =
      job.seed_fixed ? "the worker's fixed seed (--seed; not shown: later evaluations use it too)"
                     : absl::StrFormat("seed %d (secret during the evaluation)", job.seed);
  return absl::StrFormat(
      "gpu %s; inputs from %s; per call: StableHash64(\"seed/uuid/phase/trial/call\"); %d "
      "trials, %d warm-up + %d timed calls; timed by the harness (bracket minus calibrated "
      "overhead)\n",
      gpu_name, seed, trials, job.warmup_calls, job.timed_calls);
}

CallVerdict JudgeCall(const CallResult& result, bool stream_stuck) {
  CallVerdict v;
  v.error = result.message;
  switch (result.end) {
    case CallEnd::kOk:
      v.error.clear();
      return v;
    case CallEnd::kRefused:
      // A refusal is the candidate's answer; after a CUDA error in the
      // call's work the stream is held and the host with it.
      v.status = v1::RUNTIME_ERROR;
      v.error = absl::StrCat("run() failed: ", result.message);
      v.stop = v.candidate_failed = stream_stuck;
      return v;
    case CallEnd::kGone:
      v.status = v1::RUNTIME_ERROR;
      v.stop = v.candidate_failed = true;
      return v;
    case CallEnd::kTimeout:
      v.status = v1::TIMEOUT;
      v.stop = v.candidate_failed = v.kill = true;
      return v;
    case CallEnd::kInfra:
      v.status = v1::INFRA_ERROR;
      v.stop = true;
      return v;
  }
  v.status = v1::INFRA_ERROR;
  v.stop = true;
  return v;
}

void NoteCheck(const CallCheck& check, bool first, v1::WorkloadTrace* trace) {
  trace->set_max_abs_error(std::max(trace->max_abs_error(), check.max_abs_error));
  trace->set_max_rel_error(std::max(trace->max_rel_error(), check.max_rel_error));
  trace->set_matched_ratio(first ? check.matched_ratio
                                 : std::min(trace->matched_ratio(), check.matched_ratio));
}

std::string WrongTimedCallError(int trial, int call) {
  return absl::StrCat("the outputs of timed call ", call, " (trial ", trial,
                      ", fresh inputs) are wrong although the correctness calls passed: results "
                      "must be computed by every call, and be complete when the call's work is");
}

std::optional<std::string> TimingTally::Add(int trial, int call, double bracket_ms) {
  bracketed_ms_ += bracket_ms;
  const double latency = bracket_ms - overhead_ms_;
  if (latency < -tolerance_ms_) {
    return absl::StrFormat(
        "integrity check failed at timed call %d (trial %d): the harness's bracket (%.4f ms) is "
        "shorter than the calibrated cost of a call (%.4f ms, tolerance %.4f ms)",
        call, trial, bracket_ms, overhead_ms_, tolerance_ms_);
  }
  // A latency within the tolerance below zero is noise around a kernel
  // shorter than the noise: kept positive so the median stays a time.
  if (call >= warmup_calls_) samples_.push_back(std::max(latency, 1e-6));
  return std::nullopt;
}

void TimingTally::EndTrial(int trial, int calls_checked, std::string* log) {
  medians_.push_back(gpu::Summarize(samples_).median);
  absl::StrAppendFormat(log, "candidate trial %d: %s; all %d calls' outputs checked\n", trial,
                        gpu::DescribeTrial(samples_), calls_checked);
  samples_.clear();
}

double TimingTally::latency_ms() const { return gpu::Summarize(medians_).mean; }

std::optional<std::string> SetFigures(const workloads::Definition& definition,
                                      const WorkloadSpec& workload, absl::string_view gpu_name,
                                      double latency_ms, double reference_ms,
                                      v1::WorkloadTrace* trace, std::string* log) {
  trace->set_latency_ms(latency_ms);
  trace->set_reference_latency_ms(reference_ms);
  trace->set_speedup(latency_ms > 0 ? reference_ms / latency_ms : 0);
  absl::StatusOr<WorkloadCost> cost = CostOf(definition, workload.axes);
  if (!cost.ok()) return std::nullopt;  // no roofline for it: the times stand alone
  const double roofline = RooflineFraction(*cost, PeaksFor(gpu_name), latency_ms);
  trace->set_roofline_fraction(roofline);
  if (roofline > 1.1) {
    return absl::StrFormat(
        "integrity check failed: %.4f ms is %.0f%% of the roofline time, faster than the GPU's "
        "peaks allow",
        latency_ms, 100 * roofline);
  }
  if (cost->flops > 0 && latency_ms > 0) {
    absl::StrAppendFormat(log, "%.1f TFLOP/s; reference %.1f TFLOP/s\n",
                          cost->flops / (latency_ms * 1e9), cost->flops / (reference_ms * 1e9));
  }
  return std::nullopt;
}

}  // namespace ptxbench::runner
