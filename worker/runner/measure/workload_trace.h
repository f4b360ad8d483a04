#ifndef PTXBENCH_WORKER_RUNNER_MEASURE_WORKLOAD_TRACE_H_
#define PTXBENCH_WORKER_RUNNER_MEASURE_WORKLOAD_TRACE_H_

// The trace of one workload, built from what the harness (harness.h)
// measured: the seeds of its calls, what a call that ended badly means, the
// timing samples and the integrity checks on them, and the final figures.
// Plain C++ (no CUDA): the rules by which a candidate's figure is made are
// tested on any machine (workload_trace_test.cc).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"
#include "worker/runner/wire/call_outcome.h"
#include "worker/runner/wire/job.h"
#include "workloads/definition.h"

namespace ptxbench::runner {

// The seed of one call's inputs: a function of the job's secret root, the
// workload, the phase ("check", "time", "ref", "compare"), trial and call.
uint64_t CallSeed(uint64_t root, const std::string& uuid, absl::string_view phase, int trial,
                  int call);

// The workload's uuid and axes on `trace` (the axes replaced).
void SetIdentity(ptxbench::v1::WorkloadTrace& trace, const WorkloadSpec& workload);
// A trace that is only a status and one error.
ptxbench::v1::WorkloadTrace FailedTrace(const WorkloadSpec& workload,
                                        ptxbench::v1::EvalStatus status, const std::string& error);

// The first line of a candidate trace's log: how it was measured.
std::string MethodLine(absl::string_view gpu_name, const RunnerJob& job, int trials);

// What a call of the candidate that did not end well means.
struct CallVerdict {
  ptxbench::v1::EvalStatus status = ptxbench::v1::PASSED;
  std::string error;
  bool stop = false;              // no further call on this candidate host
  bool candidate_failed = false;  // the run ends kRunnerCandidateFailed
  bool kill = false;              // the host overran its deadline: it is killed
};
// `stream_stuck`: the harness's stream still waits on the call's work (a
// refusal after a CUDA error in it), so nothing more can run.
CallVerdict JudgeCall(const CallResult& result, bool stream_stuck);

// The worst of each error figure over a workload's checked calls onto
// `trace`; `first` for the first call.
void NoteCheck(const CallCheck& check, bool first, ptxbench::v1::WorkloadTrace* trace);

// The error line put first when a timed call's outputs are wrong although the
// correctness calls passed.
std::string WrongTimedCallError(int trial, int call);

// The timing calls of one workload, trial by trial. A call's latency is its
// bracket minus the host's calibrated overhead; warm-up calls are checked
// but not counted; a trial's figure is the median of its timed calls and the
// workload's the mean of the trials' medians.
class TimingTally {
 public:
  TimingTally(double overhead_ms, double tolerance_ms, int warmup_calls)
      : overhead_ms_(overhead_ms), tolerance_ms_(tolerance_ms), warmup_calls_(warmup_calls) {}

  // Counts call `call` of trial `trial`. An error when its bracket is
  // shorter than a call that does nothing (by more than the calibration's
  // tolerance): the synchronization was tampered with.
  std::optional<std::string> Add(int trial, int call, double bracket_ms);
  // Closes trial `trial`: its median kept, its line appended to `log`.
  void EndTrial(int trial, int calls_checked, std::string* log);

  double latency_ms() const;  // mean of the trials' medians; 0 before any
  double bracketed_ms() const { return bracketed_ms_; }

 private:
  const double overhead_ms_;
  const double tolerance_ms_;
  const int warmup_calls_;
  std::vector<double> samples_;  // the current trial's
  std::vector<double> medians_;
  double bracketed_ms_ = 0;  // GPU time inside brackets, for "where the time goes"
};

// The figures of a workload that passed onto `trace` (latency, reference
// latency, speedup, roofline fraction) and its throughput onto `log`. An
// error when the latency is faster than the GPU's peaks allow (over 110% of
// the roofline): no kernel gets there, a forged figure does.
std::optional<std::string> SetFigures(const workloads::Definition& definition,
                                      const WorkloadSpec& workload, absl::string_view gpu_name,
                                      double latency_ms, double reference_ms,
                                      ptxbench::v1::WorkloadTrace* trace, std::string* log);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_MEASURE_WORKLOAD_TRACE_H_
