#include "worker/runner/harness/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cuda_runtime_api.h>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"
#include "worker/runner/harness/prepared_workload.h"
#include "worker/runner/hosts/host_loop.h"
#include "worker/runner/hosts/isolation.h"
#include "worker/runner/hosts/reference_host.h"
#include "worker/runner/hosts/torch_reference.h"
#include "worker/runner/hosts/watched_host.h"
#include "worker/runner/measure/call_timer.h"
#include "worker/runner/measure/census.h"
#include "worker/runner/measure/fixed_inputs.h"
#include "worker/runner/measure/progress.h"
#include "worker/runner/measure/references.h"
#include "worker/runner/measure/workload_eval.h"
#include "worker/runner/measure/workload_trace.h"
#include "worker/runner/wire/protocol.h"

namespace ptxbench::runner {
namespace {

namespace v1 = ::ptxbench::v1;
using gpu::CudaStatus;
using protocol::Op;
using protocol::Reply;
using protocol::Request;

// Setup, load and workload requests (not calls).
constexpr absl::Duration kRequestTimeout = absl::Seconds(60);

class Harness {
 public:
  Harness(const RunnerJob& job, std::string dir, std::ostream& out)
      : job_(job), dir_(std::move(dir)), out_(out),
        torch_link_(absl::Seconds(job.isolation.call_deadline_s)) {}

  int Run() {
    if (std::optional<int> ended = ReadJob()) return *ended;
    // 1. The boundary, while the runner still has the worker's privileges
    // (which also read the inputs a dataset fixes, and open a profile's
    // files beside the results).
    LoadFixedInputs();
    if (tool_run() && !OpenProfileFiles()) {
      return FailAll(v1::INFRA_ERROR, "cannot create the profile's files", kRunnerResultsLost);
    }
    absl::StatusOr<std::unique_ptr<Isolation>> iso = Isolation::Prepare(job_, dir_);
    if (!iso.ok()) return FailAll(v1::INFRA_ERROR, Infra("isolation", iso.status()), kRunnerOk);
    isolation_ = iso->get();
    if (std::optional<int> ended = StartHosts(**iso)) return *ended;
    Phase("isolation", "isolation ready");

    // 2. The GPU, and every buffer before any host runs (a host that hogs
    // memory cannot make the harness fail later).
    if (absl::Status s = InitGpu(); !s.ok()) {
      EndReferenceHost();
      return FailAll(v1::INFRA_ERROR, Infra("GPU", s), kRunnerOk);
    }
    Phase("CUDA", "CUDA ready");
    PrepareWorkloads();
    Phase("buffers", "buffers allocated; timing the reference", BuffersDetail());

    // 3. The baseline, before the candidate host may even start. A native
    // reference host is done then; the PyTorch one stays to compute the
    // expected outputs of every checked call.
    const std::string references = TimeReferences();
    if (use_torch_) {
      torch_link_.Attach(reference_.get());
    } else {
      EndReferenceHost();
    }
    if (job_.compare_references) return CompareReferences();
    if (job_.reference_only) return WriteReferenceFigures();
    Phase("reference timing", "reference timed; starting the candidate host", references);

    // 4. The candidate: a Triton one's JIT first, in a host of its own.
    if (triton()) {
      if (std::optional<int> ended = RunJit()) return *ended;
    }
    return EvaluateCandidate();
  }

  bool results_lost() const { return results_lost_; }
  bool profiling() const { return !job_.profile.ncu.empty(); }
  bool triton() const { return job_.language == "triton"; }
  bool sanitizing() const { return !job_.sanitize.sanitizer.empty(); }
  // Under a tool (the profiler, the sanitizer): checked calls only, and the
  // tool's files copied out.
  bool tool_run() const { return profiling() || sanitizing(); }

  // Ends the hosts, and removes the candidate's sandbox (its cgroup).
  void EndHosts() {
    jit_.reset();
    candidate_.reset();
    EndReferenceHost();
  }

 private:
  static std::string Infra(absl::string_view what, const absl::Status& s) {
    return absl::StrCat(what, ": ", s.message());
  }

  // One result line, checked: a line that cannot be written (the worker's
  // disk is full) makes the run end with kRunnerResultsLost, so the worker
  // says so instead of blaming the kernel for what it cannot read.
  void Emit(const std::string& line) {
    out_ << line << std::flush;
    if (!out_.good()) results_lost_ = true;
  }

  int FailAll(v1::EvalStatus status, const std::string& error, int code) {
    for (const WorkloadSpec& w : job_.workloads) Emit(TraceLine(FailedTrace(w, status, error)));
    return code;
  }

  // The definition, the trial count, the tolerance, the reference choice.
  std::optional<int> ReadJob() {
    absl::StatusOr<workloads::Definition> def = workloads::ParseDefinition(job_.definition_json, "job");
    if (!def.ok()) return FailAll(v1::INFRA_ERROR, std::string(def.status().message()), kRunnerBadJob);
    def_ = *std::move(def);
    trials_ = job_.trials > 0 ? job_.trials : std::max(def_.trials, 1);
    tol_ = {def_.tolerance.atol, def_.tolerance.rtol, def_.tolerance.required_matched_ratio};
    call_deadline_ = absl::Seconds(job_.isolation.call_deadline_s);
    absl::StatusOr<bool> torch = UsesPyTorch(job_, def_);
    if (!torch.ok()) return FailAll(v1::INFRA_ERROR, std::string(torch.status().message()), kRunnerOk);
    use_torch_ = *torch;
    return std::nullopt;
  }

  // The candidate host started suspended in its sandbox, the reference host
  // forked (or the PyTorch one started), then the harness's privileges
  // dropped. The candidate host's channel stays in candidate_fd_.
  std::optional<int> StartHosts(Isolation& iso) {
    int cpair[2], opipe[2], rpair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cpair) != 0 ||
        pipe2(opipe, O_CLOEXEC) != 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rpair) != 0) {
      return FailAll(v1::INFRA_ERROR, "cannot create the hosts' channels", kRunnerOk);
    }
    absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> sandboxed =
        iso.SpawnCandidateHost(cpair[1], opipe[1]);
    close(cpair[1]);
    close(opipe[1]);
    if (!sandboxed.ok()) {
      return FailAll(v1::INFRA_ERROR, Infra("the candidate host's sandbox", sandboxed.status()),
                     kRunnerOk);
    }
    candidate_fd_ = cpair[0];
    artifact_ = iso.candidate_artifact();
    int jpair[2] = {-1, -1}, jpipe[2] = {-1, -1};
    std::unique_ptr<sandbox::SandboxedProcess> jit;
    if (triton()) {
      if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, jpair) != 0 ||
          pipe2(jpipe, O_CLOEXEC) != 0) {
        return FailAll(v1::INFRA_ERROR, "cannot create the JIT host's channels", kRunnerOk);
      }
      absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> spawned =
          iso.SpawnJitHost(jpair[1], jpipe[1]);
      close(jpair[1]);
      close(jpipe[1]);
      if (!spawned.ok()) {
        return FailAll(v1::INFRA_ERROR, Infra("the JIT host's sandbox", spawned.status()),
                       kRunnerOk);
      }
      jit = *std::move(spawned);
      jit_fd_ = jpair[0];
    }
    absl::StatusOr<pid_t> reference_pid =
        use_torch_ ? StartTorchHost(iso, job_.torch, rpair[1],
                                    {rpair[0], cpair[0], opipe[0], jpair[0], jpipe[0]})
                   : iso.ForkReferenceHost([&]() {
                       for (int fd : {rpair[0], cpair[0], opipe[0], jpair[0], jpipe[0]}) {
                         if (fd >= 0) close(fd);
                       }
                       const workloads::Definition& d = def_;
                       return RunHostLoop(
                           rpair[1],
                           [&d](const Request&) -> absl::StatusOr<std::unique_ptr<Candidate>> {
                             return MakeReferenceTarget(d);
                           });
                     });
    close(rpair[1]);
    if (!reference_pid.ok()) {
      close(rpair[0]);
      return FailAll(v1::INFRA_ERROR, Infra("the reference host", reference_pid.status()), kRunnerOk);
    }
    reference_pid_ = *reference_pid;
    reference_ = std::make_unique<HostChannel>(rpair[0], [pid = reference_pid_]() {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        return absl::StrCat("the reference host ended (status ", status, ")");
      }
      return std::string("the reference host stopped answering");
    });
    if (absl::Status s = iso.DropPrivileges(); !s.ok()) {
      EndReferenceHost();
      return FailAll(v1::INFRA_ERROR, Infra("dropping privileges", s), kRunnerOk);
    }
    for (const std::string& p : iso.Protections()) std::cerr << "ptxbench-runner: " << p << "\n";
    candidate_ = std::make_shared<WatchedHost>(*std::move(sandboxed), opipe[0]);
    if (jit != nullptr) jit_ = std::make_shared<WatchedHost>(std::move(jit), jpipe[0]);
    // Every wait of the harness is bounded by the call deadline; if it is held
    // up anyway (a CUDA call of the harness that the candidate's broken
    // context blocks), the candidate's hosts go, which releases it.
    StartStuckReporter(call_deadline_ + absl::Seconds(10),
                       [host = std::weak_ptr<WatchedHost>(candidate_),
                        jit_host = std::weak_ptr<WatchedHost>(jit_)] {
                         for (const auto& weak : {host, jit_host}) {
                           if (auto h = weak.lock()) h->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
                         }
                       });
    return std::nullopt;
  }

  // The figure an earlier run on this GPU measured for workload `uuid`, if
  // the job gives one.
  const KnownReference* FindKnown(const std::string& uuid) const {
    for (const KnownReference& k : job_.known_references) {
      if (k.workload_uuid == uuid) return &k;
    }
    return nullptr;
  }

  // The candidate host released, calibrated (its own code still), the
  // submission loaded, then every workload in turn.
  int EvaluateCandidate() {
    if (absl::Status s = candidate_->Release(); !s.ok()) {
      return FailAll(v1::INFRA_ERROR, Infra("starting the candidate host", s), kRunnerOk);
    }
    HostChannel cand(candidate_fd_, [this]() {
      candidate_->WaitForEnd(absl::Seconds(2));
      return candidate_->Describe();
    });
    // A profile run times nothing: no calibration (whose kernels the
    // profiler would profile too).
    absl::StatusOr<Calibration> calibration = Calibration{};
    if (!tool_run()) {
      calibration = timer_->SetUpHost(cand, "candidate host");
    } else if (absl::Status s = timer_->SetUpHostWithoutCalibration(cand); !s.ok()) {
      calibration = s;
    }
    if (!calibration.ok()) {
      // Nothing submitted is loaded yet: ptxbench's own failure.
      return FailAll(v1::INFRA_ERROR, Infra("the candidate host before loading the kernel",
                                            calibration.status()),
                     kRunnerOk);
    }
    candidate_calibration_ = *calibration;
    census_rules_.language = job_.language;
    census_rules_.off = CensusOffReason(timer_->setup_note());
    Phase("candidate host", "candidate host calibrated; loading the kernel");
    if (std::optional<v1::WorkloadTrace> failed = LoadCandidate(cand, LoadRequest())) {
      for (const WorkloadSpec& w : job_.workloads) {
        v1::WorkloadTrace t = *failed;
        SetIdentity(t, w);
        Emit(TraceLine(t));
      }
      return candidate_->ended() ? kRunnerCandidateFailed : kRunnerOk;
    }
    Phase("kernel load", "kernel loaded");
    EvaluateWorkloads(cand);
    (void)cand.Send(Request{Op::kQuit});
    // A profile run's host is the profiler's target: the profiler then
    // writes its report and reads it back, within the call deadline.
    candidate_->WaitForEnd(tool_run() ? call_deadline_ : absl::Seconds(2));
    if (tool_run()) CopyProfileFiles();
    Progress("done");
    return candidate_failed_ ? kRunnerCandidateFailed : kRunnerOk;
  }

  Request LoadRequest() const {
    Request load{Op::kLoad};
    load.language = job_.language;
    load.artifact = artifact_;
    load.launch_spec = job_.launch_spec;
    // A Python host takes the definition's inputs and outputs from it.
    if (triton()) load.definition = job_.definition_json;
    for (const workloads::Axis& a : def_.axes) load.axis_order.push_back(a.name);
    return load;
  }

  // A Triton candidate's JIT (isolation.h), before its timing host starts:
  // the JIT host loads the kernel and makes one checked call per workload,
  // on inputs no timed call gets, so that Triton compiles (and autotunes)
  // what the workloads need; then it ends, and its cache is all the timing
  // host may run of what the JIT made. Its wall time is compile time: in
  // the log, in no figure. A failure there fails every workload (the
  // kernel's, as a build error would).
  std::optional<int> RunJit() {
    const absl::Time start = absl::Now();
    if (absl::Status s = jit_->Release(); !s.ok()) {
      return FailAll(v1::INFRA_ERROR, Infra("starting the JIT host", s), kRunnerOk);
    }
    HostChannel host(jit_fd_, [this]() {
      jit_->WaitForEnd(absl::Seconds(2));
      return jit_->Describe();
    });
    if (absl::Status s = timer_->SetUpHostWithoutCalibration(host); !s.ok()) {
      return FailAll(v1::INFRA_ERROR, Infra("the JIT host before loading the kernel", s),
                     kRunnerOk);
    }
    Progress("Triton JIT");
    std::optional<v1::WorkloadTrace> failed = LoadCandidate(host, LoadRequest(), jit_.get());
    std::string at;
    for (size_t i = 0; !failed && i < job_.workloads.size(); ++i) {
      const WorkloadSpec& spec = job_.workloads[i];
      PreparedWorkload& w = workloads_[i];
      if (!w.error.empty()) continue;  // its own trace says so later
      at = spec.uuid;
      bool stop = false;
      std::optional<Failure> bad = SendCandidateWorkload(host, i, &stop);
      if (!bad) {
        WorkloadCalls calls{spec, w, host, &stop, 0, jit_.get()};
        CallCheck check;
        double bracket = 0;
        bad = CheckedCall(calls, 0, CallSeed(job_.seed, spec.uuid, "jit", 0, 0), &check, &bracket);
      }
      // Wrong outputs are for the checked calls that follow to say.
      if (bad && bad->first != v1::INCORRECT_NUMERICAL) {
        failed.emplace();
        failed->set_status(JitStatus(*bad));
        for (const std::string& e : bad->second) failed->add_errors(e);
      }
    }
    (void)host.Send(Request{Op::kQuit});
    if (!jit_->WaitForEnd(absl::Seconds(5))) {
      jit_->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
      jit_->WaitForEnd(absl::Seconds(5));
    }
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    JitCache built = isolation_->JitImages();
    jit_log_ = absl::StrFormat(
        "Triton JIT: %.2f s in a host of its own before timing (one call per workload on "
        "inputs no timed call gets; compile and autotuning time, in no figure); %s built, "
        "the only code of the submission's own that its timed calls may run\n",
        seconds, DescribeJitCache(built));
    census_rules_.jit_images = std::move(built.tags);
    Phase("Triton JIT", "Triton JIT done");
    if (!failed) {
      jit_.reset();
      return std::nullopt;
    }
    const std::string output = jit_->Output();
    for (const WorkloadSpec& w : job_.workloads) {
      v1::WorkloadTrace t = *failed;
      SetIdentity(t, w);
      if (!at.empty() && t.errors_size() > 0) {
        t.set_errors(0, absl::StrCat("during Triton's JIT (workload ", at, "): ", t.errors(0)));
      }
      t.set_log(absl::StrCat(jit_log_, output.empty() ? "" : "the JIT host's output:\n", output));
      Emit(TraceLine(t));
    }
    jit_.reset();
    return candidate_failed_ ? kRunnerCandidateFailed : kRunnerOk;
  }

  // Each workload's trace; after one that stopped the host, the rest say so.
  void EvaluateWorkloads(HostChannel& cand) {
    std::string stopped_at;
    for (size_t i = 0; i < job_.workloads.size(); ++i) {
      const WorkloadSpec& w = job_.workloads[i];
      if (!stopped_at.empty()) {
        Emit(TraceLine(FailedTrace(
            w, v1::RUNTIME_ERROR,
            absl::StrCat("not run: the evaluation stopped at workload ", stopped_at))));
        continue;
      }
      Emit(StartedLine(w.uuid));
      Progress(absl::StrCat("workload ", w.uuid));
      bool stop = false;
      Emit(TraceLine(Evaluate(i, cand, &stop)));
      if (stop) stopped_at = w.uuid;
    }
  }

  // The end of a set-up step: its time (and `detail`, if any) kept for
  // SetUpLine, `progress` logged.
  void Phase(absl::string_view name, absl::string_view progress, absl::string_view detail = "") {
    const double now = SecondsSinceStart();
    std::string part = absl::StrFormat("%s %.2f", name, now - phase_mark_s_);
    if (!detail.empty()) absl::StrAppend(&part, " [", detail, "]");
    phases_.push_back(std::move(part));
    phase_mark_s_ = now;
    Progress(progress);
  }

  // "4.21 s (isolation 0.04, CUDA 0.30, buffers 0.51 [...], reference host
  // 0.60, reference timing 1.60 [5 timed here], candidate host 0.20, kernel
  // load 0.01)"; no reference host step where every figure came from an
  // earlier run.
  std::string SetUpLine() const {
    return absl::StrFormat("%.2f s (%s)", phase_mark_s_, absl::StrJoin(phases_, ", "));
  }

  std::string BuffersDetail() const {
    double made = 0, allocated = 0;
    for (const PreparedWorkload& w : workloads_) {
      made += w.reference_setup_s;
      allocated += w.allocation_s;
    }
    return absl::StrFormat("references %.2f, allocations %.2f", made, allocated);
  }

  // The values the workloads fix, read now with the worker's privileges.
  void LoadFixedInputs() {
    for (const WorkloadSpec& w : job_.workloads) fixed_.push_back(runner::LoadFixedInputs(def_, w));
  }

  void EndReferenceHost() {
    if (reference_ == nullptr) return;
    (void)reference_->Send(Request{Op::kQuit});
    torch_link_.Attach(nullptr);
    reference_.reset();
    ReapReferenceHost(reference_pid_);
  }

  absl::Status InitGpu() {
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(0), "cudaSetDevice(0)"));
    cudaDeviceProp prop{};
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"));
    gpu_name_ = prop.name;
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                                    "cudaStreamCreate"));
    PTXB_ASSIGN_OR_RETURN(timer_, CallTimer::Create(stream_, call_deadline_));
    return absl::OkStatus();
  }

  void PrepareWorkloads() {
    for (size_t i = 0; i < job_.workloads.size(); ++i) {
      workloads_.push_back(PrepareWorkload(job_, def_, i, use_torch_, &torch_link_, fixed_[i]));
    }
  }

  // Every workload's reference figure: the one an earlier run on this GPU
  // measured where the job gives it (and the run's reference is the same),
  // else timed here on the reference host and reported in a reference line
  // for the worker to keep. Returns how many were timed and reused, in words.
  std::string TimeReferences() {
    std::vector<size_t> to_time;
    int reused = 0;
    for (size_t i = 0; i < workloads_.size(); ++i) {
      PreparedWorkload& w = workloads_[i];
      if (!w.error.empty()) continue;
      const KnownReference* known = FindKnown(job_.workloads[i].uuid);
      if (known != nullptr && w.reference != nullptr && known->name == w.reference->Name()) {
        w.reference_ms = known->ms;
        w.reference_log = known->log;
        ++reused;
      } else {
        to_time.push_back(i);
      }
    }
    std::string counts = absl::StrCat(to_time.size(), " timed here");
    if (reused > 0) absl::StrAppend(&counts, ", ", reused, " from an earlier run");
    if (to_time.empty()) return counts;
    HostChannel& host = *reference_;
    absl::StatusOr<Calibration> calibration = timer_->SetUpHost(host, "reference host");
    if (calibration.ok() && job_.calibration_survey) {
      absl::StatusOr<std::string> survey = timer_->SurveyCalibration(host, "reference host");
      if (survey.ok()) {
        calibration->log += *survey;
      } else {
        calibration = survey.status();
      }
    }
    if (calibration.ok()) {
      Request load{Op::kLoad};
      load.definition = job_.definition_json;
      absl::StatusOr<Reply> loaded = host.Ask(load, kRequestTimeout);
      if (!loaded.ok() || !loaded->ok) {
        calibration = absl::InternalError(
            loaded.ok() ? loaded->text : std::string(loaded.status().message()));
      }
    }
    Phase("reference host", "reference host calibrated");
    for (size_t i : to_time) {
      PreparedWorkload& w = workloads_[i];
      if (!calibration.ok()) {
        w.error = Infra("the reference host", calibration.status());
        continue;
      }
      absl::StatusOr<double> ms = TimeReference(host, i, *calibration);
      if (!ms.ok()) {
        w.error = Infra("reference", ms.status());
        continue;
      }
      w.reference_ms = *ms;
      w.reference_log = calibration->log + w.reference_log;
      if (w.reference != nullptr) {
        Emit(ReferenceLine({job_.workloads[i].uuid, w.reference->Name(), *ms, w.reference_log}));
      }
      if (job_.calibration_survey && i == 0) {
        // Again with the reference loaded and a workload's buffers mapped: does
        // the hand-over cost more once the context holds more?
        absl::StatusOr<std::string> again =
            timer_->SurveyCalibration(host, "reference host after its first workload");
        w.reference_log += again.ok() ? *again : std::string(again.status().message()) + "\n";
      }
    }
    return counts;
  }

  absl::StatusOr<double> TimeReference(HostChannel& host, size_t i, const Calibration& cal) {
    PreparedWorkload& w = workloads_[i];
    const WorkloadSpec& spec = job_.workloads[i];
    absl::StatusOr<Reply> reply = SendWorkload(host, def_, spec, *w.buffers, kRequestTimeout);
    if (!reply.ok()) return reply.status();
    if (!reply->ok) return absl::InternalError(reply->text);
    torch_link_.Selected(i);
    std::vector<double> medians;
    for (int t = 0; t < trials_; ++t) {
      std::vector<double> samples;
      for (int call = 0; call < job_.warmup_calls + job_.timed_calls; ++call) {
        const int set = call % WorkloadBuffers::kSets;
        PTXB_RETURN_IF_ERROR(w.buffers->Prepare(*w.reference, CallSeed(job_.seed, spec.uuid, "ref", t, call),
                                                /*expected=*/false, stream_));
        PTXB_RETURN_IF_ERROR(gpu::L2Flusher::ResetPersisting());
        Request r{Op::kCall};
        r.set = set;
        r.calls = job_.calls_per_bracket;
        CallResult c = timer_->Call(
            host, r,
            [&](cudaStream_t st) -> absl::Status {
              if (r.calls > 1) PTXB_RETURN_IF_ERROR(w.buffers->Stage(1 - set, st));
              return w.buffers->Stage(set, st);
            },
            [](cudaStream_t) { return absl::OkStatus(); });
        PTXB_RETURN_IF_ERROR(ToStatus(c));
        if (call >= job_.warmup_calls) {
          samples.push_back(std::max(c.bracket_ms - cal.overhead_ms, 0.0) / r.calls);
        }
      }
      medians.push_back(gpu::Summarize(samples).median);
      absl::StrAppendFormat(&w.reference_log, "reference %s trial %d: %s\n", w.reference->Name(),
                            t, gpu::DescribeTrial(samples));
    }
    return gpu::Summarize(medians).mean;
  }

  // The load, in the candidate host: a failed load is the kernel's fault.
  std::optional<v1::WorkloadTrace> LoadCandidate(HostChannel& host, const Request& load,
                                                 WatchedHost* watched = nullptr) {
    if (watched == nullptr) watched = candidate_.get();
    absl::StatusOr<Reply> reply = host.Ask(load, call_deadline_);
    v1::WorkloadTrace t;
    if (reply.ok() && reply->ok) return std::nullopt;
    if (reply.ok()) {
      t.set_status(v1::RUNTIME_ERROR);
      t.add_errors(absl::StrCat("the kernel did not load: ", reply->text));
    } else if (absl::IsDeadlineExceeded(reply.status())) {
      watched->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
      t.set_status(v1::TIMEOUT);
      t.add_errors(absl::StrCat("loading the kernel did not finish within ",
                                absl::FormatDuration(call_deadline_)));
    } else {
      t.set_status(v1::RUNTIME_ERROR);
      t.add_errors(absl::StrCat("while loading the kernel, ", host.WhyGone()));
    }
    if (const std::string full = isolation_->DiskFullNote(); !full.empty()) t.add_errors(full);
    return t;
  }

  // A failed step of a workload's evaluation: its status and errors.
  using Failure = std::pair<v1::EvalStatus, std::vector<std::string>>;

  // A JIT failure's status: Triton's compile errors (the host says so) are
  // COMPILE_ERROR, as a build's are; the rest as the call went.
  static v1::EvalStatus JitStatus(const Failure& f) {
    for (const std::string& e : f.second) {
      if (absl::StrContains(e, "Triton could not compile")) return v1::COMPILE_ERROR;
    }
    return f.first;
  }


  // One workload on the candidate host: its buffers sent, `trials` checked
  // calls on fresh inputs, then `trials` timing runs with every call checked.
  v1::WorkloadTrace Evaluate(size_t i, HostChannel& host, bool* stop) {
    const WorkloadSpec& spec = job_.workloads[i];
    PreparedWorkload& w = workloads_[i];
    v1::WorkloadTrace trace;
    SetIdentity(trace, spec);
    std::string log = MethodLine(gpu_name_, job_, trials_) + jit_log_ + w.reference_log +
                      candidate_calibration_.log;
    if (w.reference != nullptr) trace.set_reference(w.reference->Name());
    if (!def_.inputs.empty() && spec.fixed.size() == def_.inputs.size()) {
      log += "note: the dataset fixes every input of this workload, so every call gets the same "
             "inputs: outputs kept from an earlier call cannot be told from computed ones\n";
    }
    auto finish = [&](const Failure& f) {
      trace.set_status(f.first);
      for (const std::string& e : f.second) trace.add_errors(e);
      if (f.first == v1::RUNTIME_ERROR || f.first == v1::TIMEOUT) {
        if (const std::string full = isolation_->DiskFullNote(); !full.empty()) {
          trace.add_errors(full);
        }
        // What the kernel printed: shown as its own, never interpreted.
        const std::string output = candidate_->Output();
        if (!output.empty()) absl::StrAppend(&log, "the candidate host's output:\n", output, "\n");
      }
      trace.set_log(log);
      return trace;
    };
    if (!w.error.empty()) return finish({v1::INFRA_ERROR, {w.error}});
    if (std::optional<Failure> f = SendCandidateWorkload(host, i, stop)) return finish(*f);
    WorkloadCalls calls{spec, w, host, stop};
    if (std::optional<Failure> f = CheckCorrectness(calls, &trace, &log)) return finish(*f);
    if (tool_run()) {
      absl::StrAppend(&log, sanitizing() ? "sanitize run" : "profile run", ": checked calls only, "
                      "under the ", sanitizing() ? "sanitizer" : "profiler", "; nothing timed\n");
      return finish({v1::PASSED, {}});
    }
    const absl::Time start = absl::Now();
    TimingTally tally(candidate_calibration_.overhead_ms, candidate_calibration_.tolerance_ms,
                      job_.warmup_calls);
    CensusTally census(census_rules_);
    if (std::optional<Failure> f = TimeCalls(calls, tally, census, &log)) {
      if (job_.census && f->first == v1::INCORRECT_NUMERICAL) {
        *trace.mutable_census() = census.Summary(false);
      }
      return finish(*f);
    }
    if (job_.census) {
      *trace.mutable_census() = census.Summary(true);
      if (!trace.census().gap().empty()) {
        absl::StrAppend(&log, "census: ", trace.census().gap(), "\n");
      }
    }
    if (calls.forced > 0) {
      absl::StrAppend(&log, calls.forced, " calls synchronized inside run() (or loaded code): the "
                      "gate was opened for them, so their host time is in their measurement\n");
    }
    absl::StrAppendFormat(&log,
                          "wall: this workload %.2f s (timed brackets %.2f s); the harness so far "
                          "%.2f s, of which set-up %s\n",
                          absl::ToDoubleSeconds(absl::Now() - start), tally.bracketed_ms() / 1000,
                          SecondsSinceStart(), SetUpLine());
    if (std::optional<std::string> forged = SetFigures(def_, spec, gpu_name_, tally.latency_ms(),
                                                       w.reference_ms, &trace, &log)) {
      return finish({v1::RUNTIME_ERROR, {*forged}});
    }
    if (job_.census && census.fallback()) {
      // Timed, but not the submission's own work: no speedup is its.
      trace.set_speedup(0);
      trace.set_roofline_fraction(0);
      return finish({v1::LIBRARY_FALLBACK, {census.Finding()}});
    }
    return finish({v1::PASSED, {}});
  }

  // Workload `i`'s buffers to the candidate host; a failure is the host's
  // (a refusal, a hang, an exit) but for the harness's own export.
  std::optional<Failure> SendCandidateWorkload(HostChannel& host, size_t i, bool* stop) {
    At("workload request");
    absl::StatusOr<Reply> reply = SendWorkload(host, def_, job_.workloads[i], *workloads_[i].buffers, call_deadline_);
    if (!reply.ok() && absl::IsInternal(reply.status())) {
      return Failure{v1::INFRA_ERROR, {std::string(reply.status().message())}};
    }
    if (!reply.ok()) {
      *stop = true;
      return Failure{absl::IsDeadlineExceeded(reply.status()) ? v1::TIMEOUT : v1::RUNTIME_ERROR,
                     {host.WhyGone()}};
    }
    if (!reply->ok) return Failure{v1::RUNTIME_ERROR, {reply->text}};
    return std::nullopt;
  }

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

  // One checked call on buffer set `set`: nullopt when it went well, with
  // its checks in `check` and its bracket in `bracket`.
  std::optional<Failure> CheckedCall(WorkloadCalls& calls, int set, uint64_t seed,
                                     CallCheck* check, double* bracket) {
    PreparedWorkload& w = calls.w;
    At("prepare");
    absl::Status s = w.buffers->Prepare(*w.reference, seed, /*expected=*/true, stream_);
    if (s.ok()) s = gpu::L2Flusher::ResetPersisting();
    if (!s.ok()) {
      *calls.stop = true;
      return Failure{v1::INFRA_ERROR, {Infra("preparing inputs", s)}};
    }
    Request r{Op::kCall};
    r.set = set;
    CallResult c = timer_->Call(
        calls.host, r, [&](cudaStream_t st) { return w.buffers->Stage(set, st); },
        [&](cudaStream_t st) { return w.buffers->EnqueueChecks(set, tol_, st); });
    calls.forced += c.gate_forced;
    calls.last_forced = c.gate_forced;
    calls.census = std::move(c.census);
    const CallVerdict verdict = JudgeCall(c, timer_->stream_stuck());
    *calls.stop |= verdict.stop;
    candidate_failed_ |= verdict.candidate_failed;
    if (verdict.kill) {
      At("killing the candidate host");
      (calls.watched != nullptr ? calls.watched : candidate_.get())
          ->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
    }
    if (verdict.status != v1::PASSED) return Failure{verdict.status, {verdict.error}};
    At("read checks");
    absl::StatusOr<CallCheck> read = w.buffers->ReadChecks(set, tol_);
    if (!read.ok()) {
      *calls.stop = true;
      return Failure{v1::INFRA_ERROR, {Infra("checks", read.status())}};
    }
    *check = *read;
    *bracket = c.bracket_ms;
    if (!check->passed) return Failure{v1::INCORRECT_NUMERICAL, check->errors};
    return std::nullopt;
  }

  // Correctness: one call per trial on fresh inputs.
  std::optional<Failure> CheckCorrectness(WorkloadCalls& calls, v1::WorkloadTrace* trace,
                                          std::string* log) {
    for (int t = 0; t < trials_; ++t) {
      CallCheck check;
      double bracket = 0;
      std::optional<Failure> bad =
          CheckedCall(calls, 0, CallSeed(job_.seed, calls.spec.uuid, "check", t, 0), &check, &bracket);
      NoteCheck(check, t == 0, trace);
      if (bad) {
        absl::StrAppend(log, "correctness trial ", t, ": ", v1::EvalStatus_Name(bad->first), "\n");
        return bad;
      }
    }
    absl::StrAppend(log, "correctness: ", trials_, " trials passed\n");
    return std::nullopt;
  }

  // Timing: `trials` runs of warm-up + timed calls, alternating buffer sets,
  // every call on fresh inputs and checked.
  std::optional<Failure> TimeCalls(WorkloadCalls& calls, TimingTally& tally, CensusTally& census,
                                   std::string* log) {
    const int per_trial = job_.warmup_calls + job_.timed_calls;
    for (int t = 0; t < trials_; ++t) {
      for (int call = 0; call < per_trial; ++call) {
        CallCheck check;
        double bracket = 0;
        std::optional<Failure> bad =
            CheckedCall(calls, call % WorkloadBuffers::kSets,
                        CallSeed(job_.seed, calls.spec.uuid, "time", t, call), &check, &bracket);
        if (bad) {
          if (bad->first == v1::INCORRECT_NUMERICAL) {
            bad->second.insert(bad->second.begin(), WrongTimedCallError(t, call));
          }
          absl::StrAppend(log, "timing trial ", t, ": ", v1::EvalStatus_Name(bad->first), "\n");
          return bad;
        }
        if (std::optional<std::string> tampered = tally.Add(t, call, bracket)) {
          return Failure{v1::RUNTIME_ERROR, {*tampered}};
        }
        if (call >= job_.warmup_calls) {
          census.Add(calls.census, bracket - candidate_calibration_.overhead_ms, calls.last_forced);
        }
      }
      tally.EndTrial(t, per_trial, log);
    }
    return std::nullopt;
  }

  // The jobs that measure the references only (prepared_workload.h).
  int CompareReferences() {
    for (size_t i = 0; i < job_.workloads.size(); ++i) {
      Emit(TraceLine(CompareReferencesTrace(job_.workloads[i], workloads_[i], job_.seed, trials_,
                                            tol_, stream_)));
    }
    return kRunnerOk;
  }
  int WriteReferenceFigures() {
    for (size_t i = 0; i < job_.workloads.size(); ++i) {
      Emit(TraceLine(ReferenceFiguresTrace(job_.workloads[i], workloads_[i])));
    }
    return kRunnerOk;
  }

  // Opened while privileged: the harness cannot create files in the
  // worker's directory once it dropped to its own uid.
  std::vector<const char*> ToolFiles() const {
    if (sanitizing()) return {kSanitizerLog};
    return {kProfileReport, kProfileCsv};
  }
  bool OpenProfileFiles() {
    for (const char* name : ToolFiles()) {
      const int fd = open(absl::StrCat(dir_, "/", name).c_str(),
                          O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0) return false;
      profile_fds_.push_back(fd);
    }
    return true;
  }

  // The profiler's files from the candidate's disk, as they are: each a
  // regular file (no link), at most kMaxProfileFileBytes, or nothing. What
  // they say is the worker's to check (worker/profile/ncu_summary.h).
  void CopyProfileFiles() {
    const std::vector<const char*> names = ToolFiles();
    const int64_t limit = sanitizing() ? kMaxSanitizerLogBytes : kMaxProfileFileBytes;
    for (size_t i = 0; i < profile_fds_.size(); ++i) {
      const int in = isolation_->OpenProfileFile(names[i]);
      struct stat st;
      if (in >= 0 && fstat(in, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= limit) {
        char buffer[1 << 16];
        int64_t total = 0;
        ssize_t n;
        while ((n = read(in, buffer, sizeof buffer)) > 0 && total + n <= limit) {
          total += n;
          if (write(profile_fds_[i], buffer, static_cast<size_t>(n)) != n) break;
        }
      }
      if (in >= 0) close(in);
      close(profile_fds_[i]);
    }
    profile_fds_.clear();
  }

  void ReapReferenceHost(pid_t pid) {
    for (int i = 0; i < 200; ++i) {
      const pid_t r = waitpid(pid, nullptr, WNOHANG);
      if (r == pid || r < 0) return;  // reaped now, or already
      usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }

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

}  // namespace

int RunHarness(const RunnerJob& job, const std::string& private_dir, std::ostream& out) {
  // Never destroyed: its CUDA objects are left to the process's end. A
  // candidate whose context broke (an illegal address) never records its
  // "done", so the harness's stream waits on it for good, and tearing the
  // objects down (cudaFree synchronizes the device) would hold the GPU until
  // the worker's deadline (seen on the H200: 3 minutes for one illegal
  // address). Only the hosts are ended here; the caller exits at once.
  auto* harness = new Harness(job, private_dir, out);
  const int code = harness->Run();
  harness->EndHosts();
  return harness->results_lost() ? kRunnerResultsLost : code;
}

}  // namespace ptxbench::runner
