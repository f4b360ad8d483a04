#ifndef PTXBENCH_WORKER_RUNNER_HARNESS_HARNESS_INTERNAL_H_
#define PTXBENCH_WORKER_RUNNER_HARNESS_HARNESS_INTERNAL_H_

// Private to the harness's files (harness.h, RunHarness): the state of one
// evaluation and its steps, split by concern: start-up, the hosts and the
// result lines (harness.cc); the reference's figures (reference_timing.cc);
// the candidate's load, JIT, checked and timed calls
// (candidate_evaluation.cc); a profile or sanitize run's files
// (profile_files.cc).

#include <sys/types.h>

#include <cuda_runtime_api.h>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "worker/runner/harness/prepared_workload.h"
#include "worker/runner/hosts/isolation.h"
#include "worker/runner/hosts/torch_reference.h"
#include "worker/runner/hosts/watched_host.h"
#include "worker/runner/measure/call_timer.h"
#include "worker/runner/measure/census.h"
#include "worker/runner/measure/fixed_inputs.h"
#include "worker/runner/measure/workload_trace.h"
#include "worker/runner/wire/job.h"
#include "worker/runner/wire/protocol.h"
#include "workloads/definition.h"
#include "workloads/reference/compare.h"

namespace ptxbench::runner::harness_internal {

class Harness {
 public:
  Harness(const RunnerJob& job, std::string dir, std::ostream& out)
      : job_(job), dir_(std::move(dir)), out_(out),
        torch_link_(absl::Seconds(job.isolation.call_deadline_s)) {}

  int Run();

  bool results_lost() const { return results_lost_; }
  bool profiling() const { return !job_.profile.ncu.empty(); }
  bool triton() const { return job_.language == "triton"; }
  bool sanitizing() const { return !job_.sanitize.sanitizer.empty(); }
  // Under a tool (the profiler, the sanitizer): checked calls only, and the
  // tool's files copied out.
  bool tool_run() const { return profiling() || sanitizing(); }

  // Ends the hosts, and removes the candidate's sandbox (its cgroup).
  void EndHosts();

 private:
  static std::string Infra(absl::string_view what, const absl::Status& s) {
    return absl::StrCat(what, ": ", s.message());
  }

  // A failed step of a workload's evaluation: its status and errors.
  using Failure = std::pair<v1::EvalStatus, std::vector<std::string>>;

  // The calls of one workload on the candidate host.
  struct WorkloadCalls {
    const WorkloadSpec& spec;
    PreparedWorkload& w;
    HostChannel& host;
    bool* stop;
    int forced = 0;  // calls whose gate was opened before they enqueued
    WatchedHost* watched = nullptr;  // the host `host` reaches; null: the candidate host
    // The last call's: what its host said ran, and whether its gate was forced.
    std::string census;
    bool last_forced = false;
  };

  // Start-up, the hosts, the result lines (harness.cc).

  // One result line, checked: a line that cannot be written (the worker's
  // disk is full) makes the run end with kRunnerResultsLost, so the worker
  // says so instead of blaming the kernel for what it cannot read.
  void Emit(const std::string& line);
  int FailAll(v1::EvalStatus status, const std::string& error, int code);

  // The definition, the trial count, the tolerance, the reference choice.
  std::optional<int> ReadJob();

  // The candidate host started suspended in its sandbox, the reference host
  // forked (or the PyTorch one started), then the harness's privileges
  // dropped. The candidate host's channel stays in candidate_fd_.
  std::optional<int> StartHosts(Isolation& iso);

  // The end of a set-up step: its time (and `detail`, if any) kept for
  // SetUpLine, `progress` logged.
  void Phase(absl::string_view name, absl::string_view progress, absl::string_view detail = "");

  // "4.21 s (isolation 0.04, CUDA 0.30, buffers 0.51 [...], reference host
  // 0.60, reference timing 1.60 [5 timed here], candidate host 0.20, kernel
  // load 0.01)"; no reference host step where every figure came from an
  // earlier run.
  std::string SetUpLine() const;
  std::string BuffersDetail() const;

  // The values the workloads fix, read now with the worker's privileges.
  void LoadFixedInputs();
  void EndReferenceHost();
  absl::Status InitGpu();
  void PrepareWorkloads();
  // Each workload's input distributions (workload_eval.h,
  // KeepFiniteDistributions), once its reference computes expected outputs
  // (after the reference timing: the PyTorch host is attached then); what
  // it dropped is in the workload's log. The reference was timed on the
  // definition's whole list.
  void SettleInputDistributions();
  void ReapReferenceHost(pid_t pid);

  // The reference's figures (reference_timing.cc).

  // The figure an earlier run on this GPU measured for workload `uuid`, if
  // the job gives one.
  const KnownReference* FindKnown(const std::string& uuid) const;

  // Every workload's reference figure: the one an earlier run on this GPU
  // measured where the job gives it (and the run's reference is the same),
  // else timed here on the reference host and reported in a reference line
  // for the worker to keep. Returns how many were timed and reused, in words.
  std::string TimeReferences();
  absl::StatusOr<double> TimeReference(HostChannel& host, size_t i, const Calibration& cal);

  // The jobs that measure the references only (prepared_workload.h).
  int CompareReferences();
  int WriteReferenceFigures();

  // The candidate (candidate_evaluation.cc).

  // The candidate host released, calibrated (its own code still), the
  // submission loaded, then every workload in turn.
  int EvaluateCandidate();
  protocol::Request LoadRequest() const;

  // The load, in the candidate host: a failed load is the kernel's fault.
  std::optional<v1::WorkloadTrace> LoadCandidate(HostChannel& host, const protocol::Request& load,
                                                 WatchedHost* watched = nullptr);

  // One workload on the candidate host: its buffers sent, `trials` checked
  // calls on fresh inputs, then `trials` timing runs with every call checked.
  v1::WorkloadTrace Evaluate(size_t i, HostChannel& host, bool* stop);

  // Workload `i`'s buffers to the candidate host; a failure is the host's
  // (a refusal, a hang, an exit) but for the harness's own export.
  std::optional<Failure> SendCandidateWorkload(HostChannel& host, size_t i, bool* stop);

  // One checked call on buffer set `set`: nullopt when it went well, with
  // its checks in `check` and its bracket in `bracket`.
  std::optional<Failure> CheckedCall(WorkloadCalls& calls, int set, uint64_t seed,
                                     CallCheck* check, double* bracket);

  // Correctness: one call per trial on fresh inputs.
  std::optional<Failure> CheckCorrectness(WorkloadCalls& calls, v1::WorkloadTrace* trace,
                                          std::string* log);

  // Timing: `trials` runs of warm-up + timed calls, alternating buffer sets,
  // every call on fresh inputs and checked.
  std::optional<Failure> TimeCalls(WorkloadCalls& calls, TimingTally& tally, CensusTally& census,
                                   std::string* log);

  // A Triton candidate's JIT (isolation.h), before its timing host starts:
  // the JIT host loads the kernel and makes one checked call per workload,
  // on inputs no timed call gets, so that Triton compiles (and autotunes)
  // what the workloads need; then it ends, and its cache is all the timing
  // host may run of what the JIT made. Its wall time is compile time: in
  // the log, in no figure. A failure there fails every workload (the
  // kernel's, as a build error would).
  std::optional<int> RunJit();

  // A JIT failure's status: Triton's compile errors (the host says so) are
  // COMPILE_ERROR, as a build's are; the rest as the call went.
  static v1::EvalStatus JitStatus(const Failure& f);

  // Each workload's trace; after one that stopped the host, the rest say so.
  void EvaluateWorkloads(HostChannel& cand);

  // A profile or sanitize run's files (profile_files.cc).

  // Opened while privileged: the harness cannot create files in the
  // worker's directory once it dropped to its own uid.
  std::vector<const char*> ToolFiles() const;
  bool OpenProfileFiles();

  // The profiler's files from the candidate's disk, as they are: each a
  // regular file (no link), at most kMaxProfileFileBytes, or nothing. What
  // they say is the worker's to check (worker/profile/ncu_summary.h).
  void CopyProfileFiles();

  const RunnerJob& job_;
  const std::string dir_;
  std::ostream& out_;
  workloads::Definition def_;
  int trials_ = 1;
  reference::Tolerance tol_;
  absl::Duration call_deadline_;
  std::string gpu_name_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<CallTimer> timer_;
  std::vector<PreparedWorkload> workloads_;
  bool use_torch_ = false;
  std::vector<std::string> phases_;  // set-up steps: "name seconds [detail]"
  double phase_mark_s_ = 0;          // the end of the last set-up step
  // Per workload: the values it fixes, until they are on the GPU, or why
  // they cannot be made.
  std::vector<absl::StatusOr<std::vector<FixedValue>>> fixed_;
  std::unique_ptr<HostChannel> reference_;     // the reference host, while it is up
  pid_t reference_pid_ = -1;
  TorchHostLink torch_link_;
  std::shared_ptr<WatchedHost> candidate_;
  // A Triton candidate's JIT host (RunJit), until it ended, and its channel.
  std::shared_ptr<WatchedHost> jit_;
  int jit_fd_ = -1;
  std::string jit_log_;  // what the JIT took, for every trace's log
  CensusRules census_rules_;  // how the candidate's census is read
  const Isolation* isolation_ = nullptr;  // lives as long as Run()
  int candidate_fd_ = -1;                 // the candidate host's channel
  std::string artifact_;                  // the submission as the candidate host sees it
  Calibration candidate_calibration_;
  bool candidate_failed_ = false;
  bool results_lost_ = false;
  std::vector<int> profile_fds_;  // the profile's report and CSV, beside the results
};

}  // namespace ptxbench::runner::harness_internal

#endif  // PTXBENCH_WORKER_RUNNER_HARNESS_HARNESS_INTERNAL_H_
